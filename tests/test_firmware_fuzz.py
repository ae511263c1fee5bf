"""Random raw inputs into the real firmware on the unix port: 12,000 in `make test`,
100,000 in `make fuzz` (FUZZ_INPUTS=N sets any number), in four runs of random settings.

Pins fall, wobble and stand up at random, buttons are pressed and held at random (the
setup menu included, so games are started with random settings too). The firmware must
never raise, and after every change of the board state the invariants must hold; the
device checks them itself (`tools.sim --check`) and stops with exit status 3 if not.
The cost is the board's steps through the time the inputs span (at its deadlines and the
inputs' changes: about 0.4 ms of CPU an input), so `make test` plays an eighth of what
`make fuzz` does.
"""

import json
import os
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tools.sim.timelines import random_raw

pytestmark = pytest.mark.long(32)

RUNS = 4
INPUTS_PER_RUN = int(os.environ.get("FUZZ_INPUTS", "12000")) // RUNS  # make fuzz: 100000


@settings(
    max_examples=RUNS, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    seed=st.integers(0, 2**32 - 1),
    rules=st.sampled_from(["ddbu", "ceb", "russian"]),
    glitch_share=st.floats(0.0, 0.8),
    hold_share=st.floats(0.0, 0.5),
)
def test_random_raw_inputs_never_break_the_firmware(
    tmp_path, seed, rules, glitch_share, hold_share
):
    path = tmp_path / "raw.timeline"
    path.write_text(random_raw(seed, INPUTS_PER_RUN, glitch_share, hold_share))
    proc = subprocess.run(
        [sys.executable, "-m", "tools.sim", "--timeline", str(path), "--rules", rules,
         "--sets", "5" if rules == "ceb" else "1", "--check", "--heapsize", "32M"],
        capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr and "error" not in proc.stderr.lower()
    checked = [line for line in proc.stderr.splitlines() if line.startswith("checked:")]
    assert checked and int(checked[0].split()[1]) > 0
    json.loads(proc.stdout)
