"""The flash takes the time a real chip takes, where the board would (docs/esp32.md,
"Flash timing"): board time in the simulator's timeline mode (real time on the twin:
tests/test_twin.py); and the bench's figure of it (tools/bench/flashgap.py)."""

from helpers import device_case_tests, device_value

from tools.bench import flashgap
from tools.sim.board.flash import MAXIMUM, TYPICAL

STEP_MS = 5
ERASE_MS = TYPICAL[0] // 1000
GAP_TARGET_MS = 75  # tools/bench/front.py's target for flash_poll_gap_max_ms

test_flash_timing = device_case_tests("flash_timing_cases")


def _steps(timing):
    return device_value("micropython", "flash_timing_cases", "timeline_steps", 14, timing)


def test_a_compaction_moves_the_board_clock_by_the_time_its_erases_take():
    got = _steps("typical")
    assert got["shots"] == 14 and got["compactions"] >= 1
    polls = got["polls"]
    erasing = [(now, polls[i + 1][0], erases) for i, (now, _, erases) in enumerate(polls[:-1])
               if erases]
    assert erasing, "no step erased a sector"
    for now, then, erases in erasing:
        # the next poll comes after the erases (45 ms each) are done, not one step later
        assert then - now >= STEP_MS + erases * ERASE_MS, (now, then, erases)
    # A compaction goes on in pieces, the inputs polled between them: no step erases more
    # than one sector, and no poll comes more than 75 ms after the last (docs/performance.md,
    # "The flash's pauses": a 100 ms press begun in the gap is still counted). Written
    # whole, the compaction erased two sectors in one step: a gap of about 100 ms.
    assert max(erases for _, _, erases in polls) == 1
    assert STEP_MS + ERASE_MS <= got["gap_ms"] <= GAP_TARGET_MS
    # the steps that took no flash time follow each other a step apart, as before
    assert all(polls[i + 1][0] - now == STEP_MS for i, (now, us, _) in enumerate(polls[:-1])
               if not us and polls[i + 1][0] - now < 1000)


def test_without_timing_the_flash_takes_no_board_time():
    got = _steps("none")
    assert got["compactions"] >= 1 and got["gap_ms"] == 0
    assert all(us == 0 for _, us, _ in got["polls"])


def test_the_bench_reports_the_longest_gap_at_both_datasheet_times():
    got = flashgap.figures(smoke=True)
    gap = got["flash_poll_gap_max_ms"]
    assert STEP_MS + ERASE_MS <= gap <= GAP_TARGET_MS
    note = got["notes"]["flash_poll_gap_max_ms"]
    worst = float(note.split("it is ")[1].split(" ms")[0])
    assert worst >= STEP_MS + MAXIMUM[0] / 1000 > gap

