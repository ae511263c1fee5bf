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

What `start` does at power-up (firmware.powerup, dropped before the loop runs; in order,
docs/esp32.md says why):
1. `undo` held down: safe mode. The display says SAFE; no game, no watchdog, the REPL
   (USB serial) stays free, e.g. to fix /board.cfg after `link: "uart0"`.
2. Otherwise the game is loaded (journal replay), then the watchdog is armed, then the
   loop runs. On the ESP32 the modules that build the board (BOOT_MODULES) are dropped
   first, before the game is read: a board that loads its code into the heap (.mpy
   files) does not keep them. Should an exception ever escape the loop, the board shows
   Err 91 and keeps feeding the watchdog: a hard fault is shown, not turned into a reset
   loop.
"""

import io
import select
import time

from firmware import errors

try:
    from micropython import const
except ImportError:  # CPython: the integer itself
    const = int

STEP_MS = 5  # the simulator's virtual time advances by this much a step (tick)
_POLL = const(3)  # MicroPython's stream ioctl: MP_STREAM_POLL
_POLLIN = const(1)


class Wake(io.IOBase):
    """What the board's loop waits on, registered with its poller once and for all: ready
    when a pin has changed (`app.spots_changed`, `app.buttons_changed`: the pins'
    interrupts append to them) or the host's bytes are waiting; the poll's timeout is the
    soonest deadline. The poll asks `ioctl` once per tick while it waits
    (extmod/modselect.c, then MICROPY_EVENT_POLL_HOOK: one FreeRTOS tick on the ESP32), and
    at once when an interrupt wakes it."""

    def __init__(self, app):
        # the pins' interrupts append to these (App: a deque of one entry each)
        self.spots = app.spots_changed
        self.buttons = app.buttons_changed
        # the link's byte count (machine.UART.any: C on the board), or one that never has
        self.any = app.link_any if app.link_any is not None else bool

    def ioctl(self, request, arg):
        # Asked at every tick while the board sleeps: three cheap checks on a small object.
        if request != _POLL:
            return -1  # nothing else: not even a file number (the unix port asks for one)
        if self.spots or self.buttons or self.any():
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
        step = app.step  # (bound once: the app's own table is looked through first)
        clock = self.clock
        wait_for = self.poller.ipoll  # C on the board; returns at the first ready object
        while True:
            now = clock()
            while True:  # (this frame is made once: the `as` below costs nothing per round)
                try:
                    wait = step(now)
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


def start(board=None, clock=time.ticks_ms):
    """Power-up (firmware.powerup: the board built, the checks), then the application made
    and its game read (firmware.startapp), then the board's loop for ever; returns only
    when the game does not start (a word or a sentence saying why). The power-up's code is
    dropped before the application's is loaded, and neither is held while the board
    plays."""
    from firmware import powerup

    board = powerup.boot(board, clock)
    rooms = powerup.ROOM
    errors.forget(powerup.BOOT_MODULES)  # (powerup too: its code goes once boot() returned)
    del powerup
    if isinstance(board, str):
        return board
    from firmware import startapp

    app = startapp.make(board, clock, rooms)
    errors.forget(("firmware.startapp",))  # (used once, as the power-up)
    del startapp
    try:
        Runner(app, clock).run()
    except Exception as exc:  # the board shows it instead of resetting
        errors.halt(app.board, exc)
