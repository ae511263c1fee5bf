"""The twin's `time`: the ESP32 port's clocks and waits on top of the unix port's.

- ticks_ms/ticks_us count from the last hard reset (esp_timer, ports/esp32/mphalport.c)
  and wrap at 2**30 (MICROPY_PY_TIME_TICKS_PERIOD, extmod/modtime.c); `start_ms` lets a
  test start the clock just before the wrap.
- sleep_ms is exact (mp_hal_delay_ms finishes the last tick by busy-waiting);
  sleep_us(n) waits n - 5 us and nothing under 5 us (mp_hal_delay_us subtracts its own
  call overhead).
- `uptime_ms` is for espselect, whose waits end on 10 ms FreeRTOS ticks.
"""

import time as _real

from boardlib.ticks import esp32_ticks_add, esp32_ticks_diff

_MASK = (1 << 30) - 1

_state = {"start_ms": 0, "offset_ms": 0, "t0": _real.ticks_us()}


def configure(start_ms=0, uptime_ms=0):
    """start_ms: ticks_ms at the hard reset; uptime_ms: time since it (soft resets)."""
    _state["start_ms"] = start_ms
    _state["offset_ms"] = uptime_ms
    _state["t0"] = _real.ticks_us()


def uptime_us():
    return _real.ticks_diff(_real.ticks_us(), _state["t0"]) + _state["offset_ms"] * 1000


def uptime_ms():
    return uptime_us() // 1000


def ticks_ms():
    return (_state["start_ms"] + uptime_ms()) & _MASK


def ticks_us():
    return (_state["start_ms"] * 1000 + uptime_us()) & _MASK


ticks_cpu = ticks_us


# The ESP32's ticks arithmetic: the unix port's own time.ticks_diff and ticks_add wrap at
# its small-int range (2**62 on 64 bits), not at the ESP32's 2**30.
ticks_diff = esp32_ticks_diff
ticks_add = esp32_ticks_add


# Called at every sleep_ms (rom.py: the display lines settle while the board waits).
idle = None


def sleep_ms(ms):
    if idle is not None:
        idle()
    if ms > 0:
        _real.sleep_ms(ms)


def sleep_us(us):
    if us >= 5:
        _real.sleep_us(us - 5)


def sleep(seconds):
    _real.sleep(seconds)


time = _real.time
time_ns = _real.time_ns
localtime = _real.localtime
gmtime = _real.gmtime
mktime = _real.mktime
