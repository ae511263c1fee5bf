"""The twin's `_asyncio`: the unix port's C task queue, keyed by the twin's ticks.

asyncio keeps sleeping tasks in `_asyncio.TaskQueue`, whose C `push` takes the port's own
ticks when no key is given. On the twin those are the unix port's, not the ESP32's
(esptime, wrapping at 2**30), so every push here gets an explicit key from esptime.
The C queue orders keys with the unix port's tick period, so for the few milliseconds
around a 2**30 wrap two tasks may run in the wrong order; asyncio itself computes its
waits with esptime.ticks_diff, as on the ESP32.
"""

import _asyncio

from tools.sim.board.esp32 import esptime

Task = _asyncio.Task


class TaskQueue:
    def __init__(self):
        self._queue = _asyncio.TaskQueue()

    def peek(self):
        return self._queue.peek()

    def push(self, task, key=None):
        self._queue.push(task, esptime.ticks_ms() if key is None else key)

    def pop(self):
        return self._queue.pop()

    def remove(self, task):
        self._queue.remove(task)
