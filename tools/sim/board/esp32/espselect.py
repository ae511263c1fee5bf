"""The twin's `select`: waits end on 10 ms ticks, as on the ESP32.

extmod/modselect.c polls, then waits with mp_event_wait_ms, which on the ESP32 is
MICROPY_EVENT_POLL_HOOK: ulTaskNotifyTake(pdFALSE, 1), one FreeRTOS tick of 10 ms
(ports/esp32/mpconfigport.h). A poll with a timeout therefore returns at the first tick
boundary after the timeout unless something becomes ready: asyncio.sleep_ms(5) takes
10 ms there, and so it does here.

While a wait goes on, the switches the host side closes and opens reach the pins (their
interrupts run: ports/esp32/machine_pin.c wakes the waiting task for them), at least once
a tick: `attach(hardware)`.
"""

import select as _real

from tools.sim.board.esp32 import esptime

POLLIN = _real.POLLIN
POLLOUT = _real.POLLOUT
POLLERR = _real.POLLERR
POLLHUP = _real.POLLHUP
TICK_MS = 10
_host = [None]  # the twin's Hardware, whose host channel a wait keeps reading


def attach(hardware):
    _host[0] = hardware


def _on_tick(timeout):
    if timeout is None or timeout <= 0:
        return timeout
    now = esptime.uptime_ms()
    end = -(-(now + timeout) // TICK_MS) * TICK_MS
    return end - now


class _Poll:
    def __init__(self):
        self._poll = _real.poll()

    def register(self, obj, mask=POLLIN | POLLOUT):
        self._poll.register(obj, mask)

    def unregister(self, obj):
        self._poll.unregister(obj)

    def modify(self, obj, mask):
        self._poll.modify(obj, mask)

    def poll(self, timeout=-1):
        return self._wait(_on_tick(timeout))

    def ipoll(self, timeout=-1, flags=0):
        hardware = _host[0]
        if hardware is None or hardware.ctl_in is None:
            return self._poll.ipoll(_on_tick(timeout), flags)
        return iter(self._wait(_on_tick(timeout)))

    def _wait(self, timeout):
        """The ready objects, as poll() gives them; the host's switch changes applied
        before every look, and waited for a tick at most at a time."""
        hardware = _host[0]
        if hardware is None or hardware.ctl_in is None:
            return self._poll.poll(timeout)
        start = esptime.uptime_ms()
        while True:
            hardware.poll_host()
            ready = self._poll.poll(0)
            if ready:
                return ready
            left = TICK_MS
            if timeout is not None and timeout >= 0:
                left = timeout - (esptime.uptime_ms() - start)
                if left <= 0:
                    return ready
            hardware.wait_host(left if left < TICK_MS else TICK_MS)


def poll():
    return _Poll()


def select(rlist, wlist, xlist, timeout=None):
    if timeout is not None and timeout > 0:
        timeout = _on_tick(int(timeout * 1000)) / 1000
    return _real.select(rlist, wlist, xlist, timeout)
