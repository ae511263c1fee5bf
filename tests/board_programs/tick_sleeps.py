"""Run on the ESP32 twin with `mpremote run` (tests/test_twin.py): how long twenty 5 ms
asyncio sleeps take, and whether ticks_ms wraps past 2**30 as on the ESP32.

Prints: took <ms> wrapped <True|False> <ticks_diff across the wrap>
"""

import asyncio
import time

t0 = time.ticks_ms()


async def main():
    for _ in range(20):
        await asyncio.sleep_ms(5)


asyncio.run(main())
took = time.ticks_diff(time.ticks_ms(), t0)
later = time.ticks_add(t0, 5000)
print("took", took, "wrapped", later < t0, time.ticks_diff(later, t0))
