"""Device side of the network bench: the real firmware, its own loop, real time.

    micropython tools/sim/board/net_bench_device.py BOARD.CFG SECONDS

The simulated board with the `net` settings of BOARD.CFG runs `firmware.run`'s loop (the
network link every 10 ms, the inputs when a pin changes, ...) for SECONDS of real time
while a pin falls and is stood up again every 2 s (a shot is scored and sent). Every step
of the loop is timed (a pin that changes during one waits for its end), and so is every
round of the link: each 100 ms window prints `gap MS_SINCE_START LONGEST_STEP_US
LONGEST_LINK_STEP_US`; the host (tools.bench.net) meanwhile
takes the broker down, freezes it and brings it back, and sorts the windows by what the
broker was doing. `start` is printed when the loop begins, `end ...` with the counters
(`polls`: the steps).
"""

import sys
import time

from firmware.app import App
from firmware.run import Runner
from tools.sim.board.board import build
from tools.sim.board.wlan import FakeWLAN

WINDOW_MS = 100
DRIVE_MS = 20


def main(cfg_path, seconds):
    with open(cfg_path, "rb") as f:
        config = f.read()
    wlan = FakeWLAN(time.ticks_ms)
    sim = build(config=config, wlan=wlan)
    app = App(sim.board)
    app.boot(time.ticks_ms())
    stats = {"largest": 0, "link": 0, "polls": 0}
    service = app.service_link
    step = app.step

    def timed_service(now_ms):
        t = time.ticks_us()
        service(now_ms)
        took = time.ticks_diff(time.ticks_us(), t)
        if took > stats["link"]:
            stats["link"] = took

    started = time.ticks_ms()

    def timed_step(now_ms):
        # the loop is busy for as long as a step takes: a pin that changes meanwhile is
        # seen when it is over (its interrupt ends the wait that follows at once)
        t = time.ticks_us()
        try:
            return step(now_ms)
        finally:
            took = time.ticks_diff(time.ticks_us(), t)
            if took > stats["largest"]:
                stats["largest"] = took
            stats["polls"] += 1

    app.step = timed_step
    app.service_link = timed_service
    runner = Runner(app)

    print("start")
    end = time.ticks_add(started, seconds * 1000)
    next_shot = time.ticks_add(started, 1000)
    pin_back = None
    window_end = time.ticks_add(started, WINDOW_MS)
    while time.ticks_diff(end, time.ticks_ms()) > 0:
        now = time.ticks_ms()
        if time.ticks_diff(now, next_shot) >= 0:
            sim.set_spot(1, standing=False)
            pin_back = time.ticks_add(now, 300)
            next_shot = time.ticks_add(now, 2000)
        if pin_back is not None and time.ticks_diff(now, pin_back) >= 0:
            sim.set_spot(1, standing=True)
            pin_back = None
        if time.ticks_diff(now, window_end) >= 0:
            print("gap", time.ticks_diff(now, started), stats["largest"], stats["link"])
            stats["largest"] = stats["link"] = 0
            window_end = time.ticks_add(window_end, WINDOW_MS)
        runner.once(DRIVE_MS)  # the board's round; the table acts every DRIVE_MS at most
    net = sim.net
    print("end polls %d shots %d connects %d dropped %d errors %d" % (
        stats["polls"], app.game.shots, net.connects if net else 0,
        net.dropped if net else 0, runner.errors))


main(sys.argv[1], int(sys.argv[2]))
