"""Board time for counting the firmware's loop as the ESP32 runs it (tools.bench).

    from tools.sim.board import vclock
    vclock.install()            # before the firmware is imported: `time` and `select`
    vclock.at(150, press_ok)    # the table: press_ok() once board time reaches 150 ms
    vclock.stop_at(5000)        # the loop's wait raises vclock.Stop at 5000 ms
    try:
        runner.run()            # the firmware's own loop (firmware.run.Runner)
    except vclock.Stop:
        pass

Time stands still while the firmware works and moves only while it waits, in the ESP32's
steps: MicroPython's poll (extmod/modselect.c) checks its objects, then waits with
MICROPY_EVENT_POLL_HOOK, which on the ESP32 is `ulTaskNotifyTake(pdFALSE, 1)`: one
FreeRTOS tick of 10 ms (ports/esp32/mpconfigport.h). So a wait here checks the objects
registered with the poller (their `ioctl`, which is the firmware's own Python), and if none
is ready moves time to the next 10 ms tick and checks again, until the timeout has passed.
The table's actions (pins changing, whose interrupt handlers run at once) happen at the
first tick at or after their time, before the objects are checked.

A run is the same work at any speed, so callgrind counts it exactly (it counts only
instructions), however slow the machine is. What the stand-ins themselves cost (a Python
`ticks_ms()` where the board's is C, the loop of this `ipoll`, the table's actions) is
counted too; `calls` says how often each ran, so the bench can take it out
(tools/bench/front.py, `clock_costs`).
"""

import select as _select
import sys
import time as _time

TICK_MS = 10  # CONFIG_FREERTOS_HZ=100

POLLIN = _select.POLLIN
POLLOUT = _select.POLLOUT
POLLERR = _select.POLLERR
POLLHUP = _select.POLLHUP

ticks_diff = _time.ticks_diff
ticks_add = _time.ticks_add
sleep_us = _time.sleep_us
ticks_us = _time.ticks_us
ticks_cpu = _time.ticks_cpu
time = _time.time

# Board time in ms (starting at the port's own tick count), then the calls of the
# stand-ins: ticks_ms(), ipoll(), the ticks an ipoll() waited through (each a check of the
# registered objects), the table's actions run.
_now = [_time.ticks_ms()]
calls = [0, 0, 0, 0]
_table = []  # (ms, action) in time order; those before _next[0] have run
_next = [0]
_ready = [[None, 0]]  # ipoll's one result, reused: a wait allocates nothing


def ticks_ms():
    calls[0] += 1
    return _now[0]


def now():
    """Board time, without counting a call."""
    return _now[0]


def sleep_ms(ms):
    """Blocking sleep (the firmware's halt loop): time moves on, nothing else happens."""
    _now[0] = ticks_add(_now[0], ms)


def at(ms, action):
    """`action()` at the first tick at or after board time `ms` (absolute, as now())."""
    i = len(_table)
    while i > _next[0] and ticks_diff(_table[i - 1][0], ms) > 0:
        i -= 1
    _table.insert(i, (ms, action))


def reserve(count):
    """Room in the table for `count` more actions, taken now in one piece: a table that
    grows later wants ever larger blocks from a heap the firmware may have filled (a
    list cut short keeps its room)."""
    n = len(_table)
    _table.extend([None] * count)
    del _table[n:]


class Stop(Exception):
    """Raised out of a wait by stop_at(): the caller's way out of a loop that never ends."""


def _stop():
    raise Stop()


def stop_at(ms):
    """Have the wait that reaches board time `ms` raise Stop (after the table's other
    actions of that time)."""
    at(ms, _stop)


def _due(now):
    table = _table
    k = _next[0]
    while k < len(table) and ticks_diff(table[k][0], now) <= 0:
        _next[0] = k + 1
        calls[3] += 1
        table[k][1]()
        k = _next[0]
    if k and k == len(table):  # all done: the list starts again (no pop(0) per action)
        table.clear()
        _next[0] = 0


class _Poll:
    def __init__(self):
        self.objects = []  # [object, mask] each (no id(): on 32 bits it makes a long int)
        self.end = 0

    def _entry(self, obj):
        for entry in self.objects:
            if entry[0] is obj:
                return entry
        raise KeyError(obj)

    def register(self, obj, mask=POLLIN | POLLOUT):
        self.objects.append([obj, mask])

    def unregister(self, obj):
        self.objects.remove(self._entry(obj))

    def modify(self, obj, mask):
        self._entry(obj)[1] = mask

    # The functions below keep their frames within what MicroPython takes on the C stack
    # (py/objfun.c, VM_MAX_STATE_ON_STACK): a bigger frame comes out of the heap at every
    # call, which would count an allocator's search the board's C poll never makes.
    def ipoll(self, timeout=-1, flags=0):
        calls[1] += 1
        self.end = -1 if timeout is None or timeout < 0 else ticks_add(_now[0], timeout)
        while True:
            if len(_table) > _next[0]:
                _due(_now[0])
            if self._ready():
                return _ready
            if self._over():
                return ()

    def _ready(self):
        objects = self.objects
        i = 0
        while i < len(objects):  # (a for loop's iterator takes four words of the frame)
            entry = objects[i]
            got = entry[0].ioctl(3, entry[1])  # MP_STREAM_POLL
            if got:
                _ready[0][0] = entry[0]
                _ready[0][1] = got
                return True
            i += 1
        return False

    def _over(self):
        """True when the wait is over; else time moves to the next tick."""
        now = _now[0]
        if self.end != -1 and ticks_diff(now, self.end) >= 0:
            return True
        if self.end == -1 and not self.objects and len(_table) == _next[0]:
            raise RuntimeError("vclock: a wait that nothing can end")
        _now[0] = ticks_add(now, TICK_MS - now % TICK_MS)
        calls[2] += 1
        return False

    def poll(self, timeout=-1, flags=0):
        got = self.ipoll(timeout, flags)
        return [(got[0][0], got[0][1])] if got else []


def poll():
    return _Poll()


def install():
    """Make `time` and `select` these for every module imported from now on (the firmware's
    scheduler first): only for a process that runs the bench's counted tasks."""
    this = sys.modules[__name__]
    sys.modules["time"] = this
    sys.modules["utime"] = this
    sys.modules["select"] = this
    sys.modules["uselect"] = this
