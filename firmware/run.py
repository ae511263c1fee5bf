"""Runs the application in one loop, which sleeps until there is work.

    import firmware.run
    firmware.run.start()            # on the ESP32 (main.py does this)
    firmware.run.start(board)       # any board, e.g. the simulator's

The loop runs `App.step`, which does what is due (the inputs when a pin changed or one of
their timers ran out, the link when the host sent bytes or a frame is due, the display when
its picture changes, journal upkeep after events, the watchdog), then sleeps until the
soonest of those times, or until a pin's interrupt or the host's bytes end the wait: an
idle board wakes about once a second. The wait is `select.poll`'s, in C, on a `Wake`
object whose `ioctl` the poll asks at every tick (10 ms on the ESP32) whether a pin has
changed or bytes have come; nothing is allocated for it. There is no asyncio scheduler:
with one loop it would only add its own work to every wake-up (docs/performance.md).
The watchdog is fed only while no part keeps raising, so a broken part resets the board
rather than freezing the scores.

What `start` does at power-up, in order (docs/esp32.md says why):
1. `undo` held down: safe mode. The display says SAFE; no game, no watchdog, the REPL
   (USB serial) stays free, e.g. to fix /board.cfg after `link: "uart0"`.
2. Otherwise the game is loaded (journal replay), then the watchdog is armed, then the
   loop runs. On the ESP32 the modules that build the board (BOOT_MODULES) are dropped
   first, before the application's modules are imported and the game is read: a board
   that loads its code into the heap (.mpy files) does not keep them. Should an
   exception ever escape the loop, the board shows Err 91 and keeps feeding the
   watchdog: a hard fault is shown, not turned into a reset loop.
"""

import io
import select
import sys
import time

from boardlib import layout
from firmware import errors
from firmware.board import UNDO_BUTTON

STEP_MS = 5  # the simulator's virtual time advances by this much a step (tick)
UPKEEP_MS = 250  # the halt loop's feeding period
_POLL = 3  # MicroPython's stream ioctl: MP_STREAM_POLL
_POLLIN = 1


class Wake(io.IOBase):
    """What the board's loop waits on, registered with its poller once and for all: ready
    when a pin has changed (`app.changed[0]`, set by the pins' interrupts) or the host's
    bytes are waiting; the poll's timeout is the soonest deadline. The poll asks `ioctl`
    once per tick while it waits (extmod/modselect.c, then MICROPY_EVENT_POLL_HOOK: one
    FreeRTOS tick on the ESP32), and at once when an interrupt wakes it."""

    def __init__(self, app):
        self.changed = app.changed  # the pins' interrupts set a bit in changed[0]
        # the link's byte count (machine.UART.any: C on the board), or one that never has
        self.any = app.link_any if app.link_any is not None else bool

    def ioctl(self, request, arg):
        # Asked at every tick while the board sleeps: two cheap checks on a small object.
        if request != _POLL:
            return -1  # nothing else: not even a file number (the unix port asks for one)
        if self.changed[0] or self.any():
            return arg & _POLLIN
        return 0


class Runner:
    """The board's loop: `run()` for ever (the board), or `once()` a round at a time (the
    simulator's interactive mode and the network bench, which do their own work between)."""

    def __init__(self, app, clock=time.ticks_ms):
        self.app = app
        self.clock = clock
        self.wake = Wake(app)
        self.poller = select.poll()
        self.poller.register(self.wake, _POLLIN)

    @property
    def errors(self):
        return self.app.errors

    def run(self):
        """Step, then wait in the poll until a pin changes, the host's bytes come or the
        soonest part is due; for ever. A part's exception is handed to the app
        (App.part_failed), and the step goes on with the other parts."""
        app = self.app
        clock = self.clock
        wait_for = self.poller.ipoll  # C on the board; returns at the first ready object
        while True:
            now = clock()
            while True:  # (this frame is made once: the `as` below costs nothing per round)
                try:
                    wait = app.step(now)
                    break
                except Exception as exc:  # a part raised: counted, then on with the rest
                    app.part_failed(exc)
            wait_for(wait)

    def once(self, most_ms=None):
        """One round of run(), waiting at most `most_ms`; returns the ms step() asked for."""
        wait = tick(self.app, self.clock())
        self.poller.ipoll(wait if most_ms is None or wait < most_ms else most_ms)
        return wait


def tick(app, now_ms):
    """The board's work at now_ms (a multiple of STEP_MS), in virtual time: the
    simulator's timeline mode and the tests step the board with this, every STEP_MS; only
    what is due runs, as on the board (and a part that raises is handled as Runner does)."""
    while True:
        try:
            return app.step(now_ms)
        except Exception as exc:
            app.part_failed(exc)


SAFE_WORD = "SAFE"
# Err 93, made when this module loads: a heap that later runs out may have no room even for
# the strings that drawing it takes (a new qstr pool is a block of its own).
_NO_MEMORY = bytearray(8)
layout.error(_NO_MEMORY, errors.NO_MEMORY)
# Used once, to build the ESP32 board: firmware.hw and firmware.assemble, the board profile
# and the configuration file's reader and checks, the `net` settings' too
# (boardlib.netconfig: a networked board checks them at boot, and the link keeps the
# checked values, not the checks); tools.bench counts them apart, as boot_mpy_bytes.
BOOT_MODULES = ("firmware.hw", "firmware.assemble", "firmware.boards.esp32_devkit",
                "boardlib.config", "boardlib.netconfig")


def hold_word(board):
    """SAFE when undo is held at power-up, else None: run the game."""
    if board.read_buttons() & (1 << UNDO_BUTTON):
        return SAFE_WORD
    return None


def show_text(board, text):
    if board.display is not None:
        buf = bytearray(8)
        layout.text(buf, text)
        board.display.show(buf)


def too_old(version=None):
    """A sentence when this MicroPython is older than the firmware supports, else None."""
    version = tuple(version or sys.implementation.version[:3])
    if version >= errors.MICROPYTHON_OLDEST:
        return None
    return ("MicroPython %s is too old for this firmware: flash %s or newer "
            "(docs/building.md)" % (".".join(str(v) for v in version),
                                    ".".join(str(v) for v in errors.MICROPYTHON_OLDEST)))


def start(board=None, clock=time.ticks_ms):
    if board is None:
        board = _build()
    old = too_old()
    if old is not None:  # Err 92, and the REPL free: nothing of the game starts
        _show_code(board, errors.MICROPYTHON_TOO_OLD)
        print("pinboard: " + old)
        return old
    word = hold_word(board)
    if word is not None:
        show_text(board, word)
        print("pinboard: %s: the firmware is not running, the REPL is free" % word)
        return word
    had = set(sys.modules)
    try:
        app = _boot(board, clock)
    except MemoryError as exc:  # the code and the game do not fit this board's heap
        try:  # the pins' interrupts would keep the half-made application
            board.watch_inputs(None, None)
        except Exception:  # noqa: BLE001 - pins without interrupts: nothing held
            pass
        _forget_new(had)
        if board.net is None:
            _halt(board, exc, _NO_MEMORY)
        # The game comes first: a networked board starts again at once without its
        # network link (boardlib.mqttlink.start_without, which leaves /net.noroom)
        sys.modules["boardlib.mqttlink"].start_without(errors.NO_MEMORY)
        _halt(board, exc, _NO_MEMORY)  # the flash took no file: no second start
    board.arm_watchdog()  # after the journal replay: a slow boot must not reset the board
    try:
        Runner(app, clock).run()
    except Exception as exc:  # the board shows it instead of resetting
        _halt(board, exc)


def _boot(board, clock):
    from firmware.app import App

    app = App(board)
    app.boot(clock())
    return app


def _forget_new(had):
    """Drop the modules loaded since `had` (what a failed import left, half made), and
    collect: room to go on, or at least to say so."""
    import gc

    for name in list(sys.modules):
        if name not in had:
            sys.modules.pop(name, None)
    gc.collect()


def _build():
    """The ESP32 board (firmware.hw); then BOOT_MODULES are forgotten, so that nothing
    holds them once the board is built and the collector can take them."""
    # The rules first, from here: theirs is the deepest chain of imports (rules_core, its
    # game, saved state, settings, each rules system), and each nested import takes C
    # stack; under hw, assemble and the configuration's reader it would start three
    # levels deeper (the application keeps rules_core loaded in any case).
    try:
        no_net = _net_first()
        import rules_core  # noqa: F401
        from firmware import hw

        if no_net:
            hw.NETWORK = False
        board = hw.build()
    except MemoryError as exc:  # not even the board fits: the display alone says so
        _no_room_to_build(exc)
    if no_net:
        board.config_error = board.config_error or errors.NO_MEMORY
    forget(BOOT_MODULES)
    return board


def _net_first(no_room="/net.noroom"):
    """True (once) when the last start found no room for the game beside the network link
    (boardlib.mqttlink.start_without left `no_room`): this start goes without it."""
    import os

    try:
        os.remove(no_room)
        return True
    except OSError:
        return False


class _Bare:
    """The display alone, where the board could not be built (no watchdog runs yet)."""

    def __init__(self, display):
        self.display = display
        self.wdt = self

    def feed(self):
        pass


def _no_room_to_build(exc):
    """Drop what the failed build loaded, make the display alone (firmware.hw.bare_display)
    and show Err 93 on it for good."""
    import gc

    for name in list(sys.modules):
        if name.startswith(("rules_core", "firmware.assemble", "firmware.board",
                            "boardlib.config", "boardlib.shot", "boardlib.netconfig")):
            sys.modules.pop(name, None)
    gc.collect()
    display = None
    try:
        from firmware import hw

        display = hw.bare_display()
    except MemoryError:
        pass
    _halt(_Bare(display), exc, _NO_MEMORY)


def forget(names):
    """Drop the modules `names` (dotted) from sys.modules and from their packages."""
    for name in names:
        sys.modules.pop(name, None)
        parent, _, child = name.rpartition(".")
        try:  # an imported submodule is also an attribute of its package
            delattr(sys.modules[parent], child)
        except (KeyError, AttributeError):
            pass


def _show_code(board, code):
    """Err `code` on the display (or the screen `code` when it is one already); False when
    the display could not be written (a full heap, a broken display)."""
    if isinstance(code, int):
        buf = bytearray(8)
        layout.error(buf, code)
    else:
        buf = code
    try:
        board.display.show(buf)
        return True
    except Exception:  # a broken display, or no memory even for that: tried again
        return False


def _halt(board, exc, code=errors.LOOP_FAILED):
    """Show Err 91 (or `code`, or a screen) and keep the watchdog fed until someone
    interrupts (Ctrl-C)."""
    import gc

    if hasattr(sys, "print_exception"):
        sys.print_exception(exc)
    else:
        print(repr(exc))
    try:
        import micropython

        micropython.kbd_intr(3)  # a uart0 link turned Ctrl-C off: give the owner it back
    except (ImportError, AttributeError):
        pass
    shown = _show_code(board, code)
    tries = 0
    while True:
        board.wdt.feed()
        time.sleep_ms(UPKEEP_MS)
        if not shown and tries < 20:  # what was in the way may be garbage by now
            tries += 1
            gc.collect()
            shown = _show_code(board, code)
