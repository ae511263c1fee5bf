"""`python -m tools.bench --smoke`: every figure is there, a number or null with a reason.

The full bench (`make bench`) takes minutes and is not part of `make test`; this runs the
same code paths with tiny sizes, plus checks of the bench's own arithmetic and of the
timeline it feeds the simulator.
"""

import json
import subprocess
import sys

import pytest

from tools import bench, upy
from tools.simboard import timeline


@pytest.fixture(scope="module")
def smoke():
    proc = subprocess.run([sys.executable, "-m", "tools.bench", "--smoke", "--json"],
                          capture_output=True, text=True, cwd=upy.ROOT, timeout=600)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_every_key_is_a_number_or_an_explained_null(smoke):
    for key in bench.KEYS:
        assert key in smoke, key
        value = smoke[key]
        if value is None:
            assert smoke["notes"], "%s is null with no reason given" % key
        else:
            assert isinstance(value, (int, float)) and not isinstance(value, bool), key
            assert value >= 0, key


def test_figures_that_need_no_tool_beyond_the_port_are_measured(smoke):
    for key in ("idle_alloc_bytes", "shot_alloc_bytes", "frame_bytes",
                "line_rate_frames_per_s", "firmware_mpy_bytes", "logger_frames_per_s"):
        assert smoke[key] is not None, smoke["notes"]


def test_line_rate_follows_from_the_frame_size(smoke):
    # 8N1 at 115200 baud: 11520 bytes a second
    assert smoke["line_rate_frames_per_s"] == pytest.approx(11520 / smoke["frame_bytes"],
                                                            rel=0.01)


def test_esp32_estimates_follow_from_the_instruction_counts(smoke):
    if smoke["poll_instr"] is None:
        pytest.skip(smoke["notes"].get("instructions", "no valgrind"))
    # 2 cycles per counted instruction at 240 MHz (docs/performance.md)
    assert smoke["esp32_poll_us_est"] == pytest.approx(smoke["poll_instr"] / 120, rel=0.01)
    assert smoke["esp32_shot_ms_est"] == pytest.approx(smoke["shot_instr"] / 120000, rel=0.01)
    assert smoke["poll_instr"] > 0 and smoke["shot_instr"] > smoke["poll_instr"]


def test_flash_life_arithmetic():
    # 384 blocks x 100,000 erases; at 1 erase a shot and 1000 shots a day: 105.2 years
    assert bench.FLASH_BLOCKS == 384
    years = bench.FLASH_BLOCKS * bench.ERASE_CYCLES / (1.0 * bench.SHOTS_PER_DAY * 365)
    assert years == pytest.approx(105.2, abs=0.1)


def test_bench_timeline_is_valid_and_has_every_shot():
    text = bench.shot_timeline(25)
    events = timeline.parse(text)
    oks = [e for e in events if e[1] == timeline.PRESS and e[2] == timeline.OK_BUTTON]
    assert len(oks) == 25
    assert bench.shot_timeline(25) == text  # seeded: the same every run


def test_bench_timeline_scores_every_shot_in_the_sim(tmp_path):
    path = tmp_path / "five.timeline"
    path.write_text(bench.shot_timeline(5))
    assert bench.plays(str(path), 5, 64 << 10)  # 64 KB of heap for the data is plenty
