"""Runs the application from asyncio tasks, with a watchdog that only a healthy loop feeds.

    import firmware.run
    firmware.run.start()            # on the ESP32 (main.py does this)
    firmware.run.start(board)       # any board, e.g. the simulator's

Four tasks: inputs every 5 ms (sensors, buttons, shots, rules, journal), the display every
40 ms, the link every 10 ms, and upkeep every 250 ms (journal compaction while no shot is
in progress, the watchdog). The watchdog is fed only when every task has run since the
last feed, so one stuck task resets the board rather than freezing the scores.
"""

import asyncio
import time

from firmware.app import App

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


def start(board=None, clock=time.ticks_ms):
    if board is None:
        from firmware import hw

        board = hw.build()
    app = App(board)
    app.boot(clock())
    asyncio.run(Runner(app, clock).main())
