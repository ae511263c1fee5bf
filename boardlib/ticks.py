"""Millisecond tick arithmetic with MicroPython's wrap-around semantics, on both interpreters.

    try:
        from time import ticks_add, ticks_diff
    except ImportError:  # CPython: boardlib.ticks wraps as the ESP32 does
        from boardlib.ticks import ticks_add, ticks_diff
    deadline = ticks_add(now_ms, 1500)
    if ticks_diff(now_ms, deadline) >= 0:
        ...  # the deadline has passed, even across a wrap of the tick counter

On MicroPython these are the built-in `time.ticks_add` / `time.ticks_diff` (period 2**30
on the ESP32). On CPython a fallback wraps at 2**30 exactly like the ESP32 does. The
board's modules take the built-ins from `time` themselves, as above, so a board never
loads this module: it would cost the heap its module, its globals and its names for two
functions the firmware already has in C. Tools and tests import it directly.
`TICKS_PERIOD` is the period in use; a difference is only meaningful while the two times
are less than half a period apart, so callers compare stale timestamps only while a
timer is running. `esp32_ticks_diff` and `esp32_ticks_add` are the ESP32's arithmetic on
any interpreter (the ESP32 twin's clock: the unix port's own wraps at 2**62).
"""

_PERIOD = 1 << 30  # the ESP32's (MICROPY_PY_TIME_TICKS_PERIOD)
_MASK = _PERIOD - 1
_HALF = _PERIOD >> 1


def esp32_ticks_diff(a, b):
    """Signed difference a - b of two tick values, in [-2**29, 2**29), as on the ESP32."""
    d = (a - b) & _MASK
    # Subtract rather than add-then-mask: stays a small int on a 32-bit port.
    if d >= _HALF:
        d -= _PERIOD
    return d


def esp32_ticks_add(t, delta):
    """The tick value delta ms after t, as on the ESP32; |delta| must be under half a
    period."""
    if delta < -_HALF or delta >= _HALF:
        raise OverflowError("ticks interval overflow")  # as MicroPython does
    return (t + delta) & _MASK


try:
    from time import ticks_add, ticks_diff
except ImportError:  # CPython: no ticks functions in its time module
    ticks_diff = esp32_ticks_diff
    ticks_add = esp32_ticks_add


# ticks_add(0, -1) is the largest tick value, whatever the port's period is.
TICKS_PERIOD = ticks_add(0, -1) + 1  # type: ignore[type-var]  # 0 is a tick value
