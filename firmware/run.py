"""Runs the application from asyncio tasks, with a watchdog that only a healthy loop feeds.

    import firmware.run
    firmware.run.start()            # on the ESP32 (main.py does this)
    firmware.run.start(board)       # any board, e.g. the simulator's

Four tasks: inputs every 5 ms (sensors, buttons, shots, rules, journal), the display every
40 ms, the link every 10 ms, and upkeep every 250 ms (journal compaction while no shot is
in progress, the watchdog). The watchdog is fed only when every task has run since the
last feed, so one stuck task resets the board rather than freezing the scores.

What `start` does at power-up, in order (docs/esp32.md says why):
1. `undo` held down: safe mode. The display says SAFE; no game, no watchdog, the REPL
   (USB serial) stays free, e.g. to fix /board.cfg after `link: "uart0"`.
2. Otherwise the game is loaded (journal replay), then the watchdog is armed, then the
   tasks run. On the ESP32 the modules that build the board (BOOT_MODULES) are dropped
   first, before the application's modules are imported and the game is read: a board
   that loads its code into the heap (.mpy files) does not keep them. Should an
   exception ever escape the tasks, the board shows Err 91 and keeps feeding the
   watchdog: a hard fault is shown, not turned into a reset loop.
"""

import sys
import time

try:
    import asyncio
except ImportError:  # MicroPython 1.20 freezes it as uasyncio: too old, start() says so
    asyncio = None

from boardlib import layout
from firmware import errors
from firmware.board import UNDO_BUTTON

INPUT_MS = 5
STEP_MS = INPUT_MS  # virtual time advances by one input poll
DISPLAY_MS = 40
LINK_MS = 10
UPKEEP_MS = 250


class Runner:
    def __init__(self, app, clock=time.ticks_ms):
        self.app = app
        self.clock = clock
        self.beats = bytearray(3)  # inputs, display, link: set when the task has run
        self.errors = 0

    def _guard(self, step, index):
        try:
            step(self.clock())
            self.beats[index] = 1
        except Exception as exc:  # the scoreboard keeps going; the count shows on the bench
            self.errors += 1
            if self.errors < 4:
                print("step error:", repr(exc))

    async def _every(self, step, index, period_ms):
        while True:
            self._guard(step, index)
            await asyncio.sleep_ms(period_ms)

    async def _upkeep(self):
        app = self.app
        while True:
            try:
                app.upkeep(self.clock())
            except Exception as exc:
                self.errors += 1
                print("upkeep error:", repr(exc))
            beats = self.beats
            if beats[0] and beats[1] and beats[2]:
                app.board.wdt.feed()
                beats[0] = beats[1] = beats[2] = 0
            await asyncio.sleep_ms(UPKEEP_MS)

    async def main(self):
        app = self.app
        asyncio.create_task(self._every(app.poll_inputs, 0, INPUT_MS))
        asyncio.create_task(self._every(app.refresh_display, 1, DISPLAY_MS))
        asyncio.create_task(self._every(app.service_link, 2, LINK_MS))
        await self._upkeep()


def tick(app, now_ms):
    """The tasks' work for the 5 ms step at now_ms (a multiple of 5), in virtual time:
    the simulator's timeline mode and the bench run the board's schedule with this."""
    app.poll_inputs(now_ms)
    if now_ms % LINK_MS == 0:
        app.service_link(now_ms)
    if now_ms % DISPLAY_MS == 0:
        app.refresh_display(now_ms)
    if now_ms % UPKEEP_MS == 0:
        app.upkeep(now_ms)
        app.board.wdt.feed()


SAFE_WORD = "SAFE"
# Err 93, made when this module loads: a heap that later runs out may have no room even for
# the strings that drawing it takes (a new qstr pool is a block of its own).
_NO_MEMORY = bytearray(8)
layout.error(_NO_MEMORY, errors.NO_MEMORY)
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
    try:
        from firmware.app import App

        app = App(board)
        app.boot(clock())
    except MemoryError as exc:  # the code and the game do not fit this board's heap
        for name in list(sys.modules):  # what the failed import left: room to say so
            if name.startswith(("firmware.app", "firmware.screens", "rules_core")):
                sys.modules.pop(name, None)
        import gc

        gc.collect()
        _halt(board, exc, _NO_MEMORY)
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
    for name in BOOT_MODULES:
        sys.modules.pop(name, None)
        parent, _, child = name.rpartition(".")
        try:  # an imported submodule is also an attribute of its package
            delattr(sys.modules[parent], child)
        except (KeyError, AttributeError):
            pass
    return board


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
