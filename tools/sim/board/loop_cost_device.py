"""What a wake-up of the board's loop costs, with and without asyncio's scheduler.

    micropython -m tools.sim.board.loop_cost_device poll|asyncio N

Both run an empty step N times, counted between two gc.isenabled() calls (tools.bench's
window): `poll` as firmware/run.py's Runner does (the step, then `select.poll.ipoll` in C
on an object whose `ioctl` answers whether a pin changed), `asyncio` as one task would
(the step, then `await asyncio.sleep_ms(0)`: the scheduler's own round, the least a task
pays to wait; waiting on the pins through asyncio's poller costs more). Prints `ram`: the
heap the loop's machinery holds once set up (the asyncio module's objects included; its
code is frozen on the ESP32 as on the unix port, so only its data counts).
"""

import gc
import io
import select
import sys
from collections import deque

_POLL = 3  # MP_STREAM_POLL
_POLLIN = 1


class Wake(io.IOBase):
    # as firmware.run.Wake: the pins' interrupts append to a deque of one entry per group
    def __init__(self):
        self.spots = deque((), 1)
        self.buttons = deque((), 1)

    def ioctl(self, request, arg):
        if request != _POLL:
            return -1
        return arg & _POLLIN if self.spots or self.buttons else 0


def step(now):
    return 0  # the ms until the next part is due: the loop goes round at once


def with_poll(n):
    gc.collect()
    before = gc.mem_alloc()
    poller = select.poll()
    poller.register(Wake(), _POLLIN)
    gc.collect()
    print("ram", gc.mem_alloc() - before)
    wait_for = poller.ipoll
    gc.isenabled()
    for i in range(n):
        wait_for(step(i))
    gc.isenabled()
    return poller


def with_asyncio(n):
    gc.collect()
    before = gc.mem_alloc()
    import asyncio

    async def task():
        gc.isenabled()
        for i in range(n):
            step(i)
            await asyncio.sleep_ms(0)
        gc.isenabled()

    asyncio.run(task())
    gc.collect()
    print("ram", gc.mem_alloc() - before)


if __name__ == "__main__":
    (with_poll if sys.argv[1] == "poll" else with_asyncio)(int(sys.argv[2]))
