"""Runs the application from one asyncio task, which sleeps until there is work.

    import firmware.run
    firmware.run.start()            # on the ESP32 (main.py does this)
    firmware.run.start(board)       # any board, e.g. the simulator's

The task runs `App.step`, which does what is due (the inputs when a pin changed or one of
their timers ran out, the link when the host sent bytes or a frame is due, the display when
its picture changes, journal upkeep after events, the watchdog), then sleeps until the
soonest of those times, or until a pin's interrupt or the host's bytes end the wait: an
idle board wakes about once a second. The wait is on a `Wake` object that asyncio's poller
asks at every tick (10 ms on the ESP32) whether it is ready; nothing is allocated for it.
The watchdog is fed only while no part keeps raising, so a broken part resets the board
rather than freezing the scores.

What `start` does at power-up, in order (docs/esp32.md says why):
1. `undo` held down: safe mode. The display says SAFE; no game, no watchdog, the REPL
   (USB serial) stays free, e.g. to fix /board.cfg after `link: "uart0"`.
2. Otherwise the game is loaded (journal replay), then the watchdog is armed, then the
   task runs. On the ESP32 the modules that build the board (BOOT_MODULES) are dropped
   first, before the application's modules are imported and the game is read: a board
   that loads its code into the heap (.mpy files) does not keep them. Should an
   exception ever escape the task, the board shows Err 91 and keeps feeding the
   watchdog: a hard fault is shown, not turned into a reset loop.
"""

import asyncio
import io
import time
from asyncio import core  # type: ignore[attr-defined]  # not in the stubs

from boardlib import layout
from boardlib.ticks import ticks_add, ticks_diff
from firmware import errors
from firmware.board import UNDO_BUTTON

STEP_MS = 5  # the simulator's virtual time advances by this much a step (tick)
UPKEEP_MS = 250  # the halt loop's feeding period
_POLL = 3  # MicroPython's stream ioctl: MP_STREAM_POLL
_POLLIN = 1


class Wake(io.IOBase):
    """What the board's task waits on, registered with asyncio's poller once and for all:
    ready when a pin has changed (`app.changed[0]`, set by the pins' interrupts), when the
    host's bytes are waiting, or when the deadline has passed. The poller asks `ioctl`
    once per tick while the task waits (extmod/modselect.c, then MICROPY_EVENT_POLL_HOOK:
    one FreeRTOS tick on the ESP32), and at once when an interrupt wakes it."""

    def __init__(self, app, clock):
        self.changed = app.changed  # the pins' interrupts set a bit in changed[0]
        self.clock = clock
        self.deadline = 0
        # the link's byte count (machine.UART.any: C on the board), or one that never has
        self.any = app.link_any if app.link_any is not None else bool

    def ioctl(self, request, arg):
        # Asked at every tick while the board sleeps: the cheapest checks first, and the
        # few attributes of a small object.
        if request != _POLL:
            return -1  # nothing else: not even a file number (the unix port asks for one)
        if self.changed[0] or self.any() or ticks_diff(self.clock(), self.deadline) >= 0:
            return arg & _POLLIN
        return 0


class Runner:
    def __init__(self, app, clock=time.ticks_ms):
        self.app = app
        self.clock = clock
        self.wake = Wake(app, clock)

    @property
    def errors(self):
        return self.app.errors

    def main(self):
        """The board's task (a generator, as asyncio's own waits are): step, then wait on
        the Wake until it is ready. It stays registered with the poller: after the first
        wait only its waiting task is set again (asyncio's IOQueue would otherwise drop
        and re-make its entry, allocating, at every wake-up)."""
        app = self.app
        wake = self.wake
        clock = self.clock
        queue = core._io_queue
        entry = None
        try:
            while True:
                now = clock()
                while True:  # a generator's frame is made once: the `as` costs nothing here
                    try:
                        wait = app.step(now)
                        break
                    except Exception as exc:  # a part raised: counted, then on with the rest
                        app.part_failed(exc)
                wake.deadline = ticks_add(now, wait)
                if entry is None:
                    queue.queue_read(wake)
                    entry = queue.map[id(wake)]
                    entry[1] = wake  # never a task: keeps the entry after a wake-up
                else:
                    task = core.cur_task
                    entry[0] = task
                    task.data = queue  # as IOQueue._enqueue: a cancelled task leaves it
                    queue.poller.modify(wake, _POLLIN)
                yield
        finally:  # cancelled, or a step's exception escaped: the poller forgets the Wake
            if queue.map.get(id(wake)) is entry and entry is not None:
                del queue.map[id(wake)]
                queue.poller.unregister(wake)


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
# Used once, to build the ESP32 board: firmware.hw, the board profile and the configuration
# file's reader and checks (tools.bench counts them apart, as boot_mpy_bytes).
BOOT_MODULES = ("firmware.hw", "firmware.boards.esp32_devkit", "boardlib.config")


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


def start(board=None, clock=time.ticks_ms):
    if board is None:
        board = _build()
    word = hold_word(board)
    if word is not None:
        show_text(board, word)
        print("pinboard: %s: the firmware is not running, the REPL is free" % word)
        return word
    from firmware.app import App

    app = App(board)
    app.boot(clock())
    board.arm_watchdog()  # after the journal replay: a slow boot must not reset the board
    try:
        asyncio.run(Runner(app, clock).main())
    except Exception as exc:  # the board shows it instead of resetting
        _halt(board, exc)


def _build():
    """The ESP32 board (firmware.hw); then BOOT_MODULES are forgotten, so that nothing
    holds them once the board is built and the collector can take them."""
    from firmware import hw

    board = hw.build()
    forget(BOOT_MODULES)
    return board


def forget(names):
    """Drop the modules `names` (dotted) from sys.modules and from their packages."""
    import sys

    for name in names:
        sys.modules.pop(name, None)
        parent, _, child = name.rpartition(".")
        try:  # an imported submodule is also an attribute of its package
            delattr(sys.modules[parent], child)
        except (KeyError, AttributeError):
            pass


def _halt(board, exc):
    """Show Err 91 and keep the watchdog fed until someone interrupts (Ctrl-C)."""
    import sys

    if hasattr(sys, "print_exception"):
        sys.print_exception(exc)
    else:
        print(repr(exc))
    try:
        import micropython

        micropython.kbd_intr(3)  # a uart0 link turned Ctrl-C off: give the owner it back
    except (ImportError, AttributeError):
        pass
    buf = bytearray(8)
    layout.error(buf, errors.LOOP_FAILED)
    try:
        board.display.show(buf)
    except Exception:  # nothing more to say on a broken display
        pass
    while True:
        board.wdt.feed()
        time.sleep_ms(UPKEEP_MS)
