"""`make check PORT=...` on the ESP32 twin: the firmware as deployed on its flash, the board
built by the real `firmware.hw.build()` over the twin's machine module, reached through
its USB-serial REPL while the scoreboard runs; afterwards the scoreboard starts again.
"""

import subprocess
import sys
import time

import pytest
from twin_helpers import booted, flash, scores_shown

from tools.port import upy

pytestmark = [pytest.mark.long(11), pytest.mark.realtime]


def test_make_check_on_the_twin_then_the_scoreboard_again(tmp_path):
    flash(tmp_path)
    with booted(tmp_path) as twin:
        twin.wait_display(scores_shown, timeout=60)
        scores = twin.display
        twin.set_spot(3, standing=False)  # a pin lying on spot 3
        twin.set_button("carom", True)  # and carom held down
        proc = subprocess.Popen(
            [sys.executable, "-m", "tools.check", "--port", twin.usb_path, "--seconds", "4"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=upy.ROOT)
        try:
            # the board's own display says which button is down
            twin.wait_display(lambda text: text == "bt  CAro", timeout=60)
            twin.set_button("carom", False)
            twin.set_spot(3, standing=True)
            out, err = proc.communicate(timeout=120)
        finally:
            if proc.poll() is None:
                proc.kill()
        assert proc.returncode == 0, out + err
        lines = out.splitlines()
        assert lines[0] == "check: 5 spots, standing_level 0; hold undo on the board to leave"
        assert "spots 1:pin 2:pin 3:--- 4:pin 5:pin  lines 0 0 1 0 0" in lines
        assert "button carom" in lines
        assert "spots 1:pin 2:pin 3:pin 4:pin 5:pin  lines 0 0 0 0 0" in lines
        assert lines[-1] == "check: done"
        # the friendly soft reset after the check starts main.py: the game is back
        time.sleep(0.5)
        twin.wait_display(lambda text: text == scores, timeout=60)
        assert "WDT" not in twin.resets, twin.resets
