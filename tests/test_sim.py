"""The simulated table: the real firmware on the unix port agrees with tools.replay.

Each game is played twice: as a raw input timeline (pins falling and standing up, buttons
pressed and held) through `python -m tools.sim --timeline`, and as the same shots through
`python -m tools.replay`. The final board states must be byte for byte the same.
"""

import json
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tools.sim.timelines import Shot, build, random_game

pytestmark = pytest.mark.long(37)

SETS = {"ddbu": 1, "ceb": 3, "russian": 1}


def run(args, **kw):
    return subprocess.run(
        [sys.executable, "-m", *args], capture_output=True, text=True, timeout=300, **kw
    )


def sim(tmp_path, timeline, *flags, name="game"):
    path = tmp_path / (name + ".timeline")
    path.write_text(timeline)
    return run(["tools.sim", "--timeline", str(path), *flags])


def replay(tmp_path, script, name="game"):
    path = tmp_path / (name + ".shots")
    path.write_text(script)
    proc = run(["tools.replay", str(path)])
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def settings_flags(rules, distance=(40, 40)):
    return ["--rules", rules, "--distance", "%d,%d" % distance, "--sets", str(SETS[rules])]


@pytest.mark.parametrize("rules", ["ddbu", "ceb", "russian"])
@settings(
    max_examples=3, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(seed=st.integers(0, 2**32 - 1))
def test_random_game_through_the_firmware_equals_replay(tmp_path, rules, seed):
    events = random_game(rules, seed, length=30, sets=SETS[rules])
    timeline, script = build(rules, events, sets=SETS[rules])
    proc = sim(tmp_path, timeline, *settings_flags(rules))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == replay(tmp_path, script)


@pytest.mark.parametrize("rules", ["ddbu", "ceb"])
def test_stepping_at_the_boards_deadlines_plays_as_stepping_every_5_ms(tmp_path, rules):
    # The simulator steps the board when it asked to be woken or an input changes
    # (tools/sim/board/run.py); `--display-log` steps it every 5 ms. A part whose deadline
    # App.step did not count in its wait would run late in the first and on time in the
    # second: the games and the last picture must be the same.
    events = random_game(rules, 11, length=20, sets=SETS[rules])
    timeline, _ = build(rules, events, sets=SETS[rules])
    runs = {}
    for every_step in (False, True):
        flags = ["--show-display"] + (["--display-log"] if every_step else [])
        proc = sim(tmp_path, timeline, *settings_flags(rules), *flags)
        assert proc.returncode == 0, proc.stderr
        shown = [line for line in proc.stderr.splitlines() if line.startswith("display: ")]
        runs[every_step] = (proc.stdout, shown[-1:])
    assert runs[False] == runs[True] and runs[True][1]


@pytest.mark.parametrize("display", ["tm1637", "max7219"])
def test_what_the_display_shows_after_a_game(tmp_path, display):
    # ddbu (seed 000 §3): pin 2 = 2, then a carambole = 4 (player 1 goes on), a miss passes
    # the turn; player 2 topples pins 1 and 3 = 4. Scores right-aligned per half, the dot
    # of player 2's outer digit says who is at the table.
    events = [Shot(pins=(2,)), Shot(carom="carom"), Shot(), Shot(pins=(1, 3))]
    timeline, script = build("ddbu", events)
    proc = sim(tmp_path, timeline, "--display", display, "--show-display")
    assert proc.returncode == 0, proc.stderr
    state = json.loads(proc.stdout)
    assert state["score"] == [6, 4] and state["turn"] == 2
    assert "display: [   6   4.]" in proc.stderr
    assert proc.stdout == replay(tmp_path, script)


def test_an_hour_of_idle_and_play_fits_a_64k_heap(tmp_path):
    # An hour at the table: a shot every 30 s, long idle stretches between them; the
    # firmware's data must live in 64 KB (the code itself is frozen into flash on a board).
    events = random_game("ddbu", 7, length=120, distance=(500, 500))
    timeline, script = build("ddbu", events, distance=(500, 500), gap_ms=30000)
    assert int(timeline.splitlines()[-1].split()[0]) >= 3_500_000
    proc = sim(tmp_path, timeline, *settings_flags("ddbu", (500, 500)), "--heap-budget", "64K")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "MemoryError" not in proc.stderr
    assert proc.stdout == replay(tmp_path, script)


def test_state_dir_resumes_the_game_like_a_reboot(tmp_path):
    events = random_game("ceb", 11, length=24, sets=3)
    first_half, second_half = events[:12], events[12:]
    state = tmp_path / "flash"
    t1, _ = build("ceb", first_half, sets=3)
    proc = sim(tmp_path, t1, *settings_flags("ceb"), "--state", str(state), name="a")
    assert proc.returncode == 0, proc.stderr
    # the second run starts at 0 again, with no settings: the game comes back from flash
    t2, _ = build("ceb", second_half, sets=3)
    proc = sim(tmp_path, t2, "--state", str(state), name="b")
    assert proc.returncode == 0, proc.stderr
    _, whole = build("ceb", events, sets=3)
    assert proc.stdout == replay(tmp_path, whole)


def test_settings_with_a_game_in_the_state_dir_need_new_game(tmp_path):
    state = tmp_path / "flash"
    t1, _ = build("ddbu", [Shot(pins=(1,))])
    assert sim(tmp_path, t1, "--state", str(state)).returncode == 0
    proc = sim(tmp_path, t1, "--state", str(state), "--rules", "russian")
    assert proc.returncode == 2
    assert "--new-game" in proc.stderr and proc.stdout == ""
    proc = sim(tmp_path, t1, "--state", str(state), "--rules", "russian", "--new-game")
    assert proc.returncode == 0, proc.stderr
    state_json = json.loads(proc.stdout)
    assert state_json["rules"] == "russian" and state_json["score"] == [2, 0]


def test_a_bad_timeline_line_is_reported_with_its_number(tmp_path):
    proc = sim(tmp_path, "0 pins up 1 2 3 4 5\n100 pin 9 down\n")
    assert proc.returncode == 2
    assert ":2:" in proc.stderr and proc.stdout == ""


def test_a_team_match_resumes_mid_match_with_its_players_and_marked_ball(tmp_path):
    # CEB 28 team play through the firmware: the players at the table and the marked ball
    # come back from flash after a reboot exactly as replay --teams has them.
    events = random_game("ceb", 5, length=24, sets=3)
    state = tmp_path / "flash"
    t1, _ = build("ceb", events[:12], sets=3)
    proc = sim(tmp_path, t1, *settings_flags("ceb"), "--teams", "--state", str(state),
               name="a")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["members"] is not None
    t2, _ = build("ceb", events[12:], sets=3)
    proc = sim(tmp_path, t2, "--state", str(state), "--show-display", name="b")
    assert proc.returncode == 0, proc.stderr
    _, whole = build("ceb", events, sets=3)
    assert proc.stdout == replay(tmp_path, "teams 1\n" + whole)
    assert "\u00b0" in proc.stderr.split("display: ")[1]  # the marked-ball ring is shown


def test_the_terminal_line_names_the_marked_ball_and_the_players_up():
    from rules_core import Game
    from tools.sim.view import describe

    game = Game("ceb", 30, 3, 1, 1)
    game.shot(pins=0b00001)  # team 1 opens: 2 points to team 2, nobody changes
    game.shot(pins=0b00101, carom=1)  # team 2 scores 10: team 1 sends its second player
    line = describe(game.state())
    assert "marked ball (\u00b0): player 2" in line and "up: A2 b1" in line
    assert "marked" not in describe(Game("ddbu", 30).state())
