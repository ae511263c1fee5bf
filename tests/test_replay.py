"""python -m tools.replay (CONTRACT section 2) and the worked games in tests/games/.

Each tests/games/*.shots file carries "#expect {...}" lines: final board-state values
worked out by hand from the rule texts."""

import glob
import json
import os
import subprocess
import sys

import pytest

from tools.replay import front as replay
from tools.replay import shotscript as script

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GAMES = sorted(glob.glob(os.path.join(ROOT, "tests", "games", "*.shots")))


def expected(path):
    values = {}
    with open(path) as f:
        for line in f:
            if line.startswith("#expect "):
                values.update(json.loads(line[len("#expect "):]))
    return values


def run(path, *flags, capsys):
    code = replay.main([str(path), *flags])
    out, err = capsys.readouterr()
    return code, out, err


def test_there_are_worked_games_for_every_rules_id():
    names = " ".join(os.path.basename(p) for p in GAMES)
    for rules in ("ddbu", "ceb", "russian"):
        assert rules + "_" in names


@pytest.mark.parametrize("path", GAMES, ids=os.path.basename)
def test_worked_game_final_state(path, capsys):
    code, out, err = run(path, capsys=capsys)
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert len(lines) == 1
    state = json.loads(lines[0])
    want = expected(path)
    assert len(want) >= 8
    assert {k: state[k] for k in want} == want


def write(tmp_path, text, name="t.shots"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_trace_prints_one_line_per_event_including_undo(tmp_path, capsys):
    path = write(tmp_path, "rules ddbu\ndistance 40\n\nshot pins=1\nshot\n# c\nundo\n")
    code, out, err = run(path, "--trace", capsys=capsys)
    lines = out.splitlines()
    assert code == 0 and len(lines) == 3
    assert [json.loads(x)["shots"] for x in lines] == [1, 2, 1]
    assert lines[2] == lines[0]


def test_flags_override_script_settings(tmp_path, capsys):
    path = write(tmp_path, "rules ddbu\ndistance 40\nfirst 1\nshot pins=3\n")
    code, out, err = run(path, "--rules", "ceb", "--distance", "30,20", "--sets", "3",
                         "--first", "2", capsys=capsys)
    state = json.loads(out)
    assert code == 0
    assert (state["rules"], state["distance"], state["best_of"], state["first"]) == (
        "ceb", [30, 20], 3, 2)
    assert state["score"] == [10, 0]  # player 2's opening shot: the red alone to player 1


def test_settings_only_prints_the_initial_state(tmp_path, capsys):
    path = write(tmp_path, "rules russian\ndistance 100\n")
    code, out, err = run(path, capsys=capsys)
    assert code == 0
    assert json.loads(out)["remaining"] == [100, 100]


BAD = [
    ("rules ddbu\ndistance 40\nshot pins=6\n", 3, "bad pin number"),
    ("rules ddbu\ndistance 40\nshot pins=1,1\n", 3, "listed twice"),
    ("rules ddbu\ndistance 40\nshot pins=\n", 3, "pins="),
    ("rules ddbu\ndistance 40\nshot pins=1 pins=2\n", 3, "pins given twice"),
    ("rules ddbu\ndistance 40\nshot carom casino\n", 3, "given twice"),
    ("rules ddbu\ndistance 40\nshot foul=\n", 3, "empty foul name"),
    ("rules ddbu\ndistance 40\nshot foul=Bad!\n", 3, "bad foul name"),
    ("rules ddbu\ndistance 40\nshot bank\n", 3, "unknown word"),
    ("rules ddbu\ndistance 40\nshoot\n", 3, "unknown keyword"),
    ("rules ddbu\ndistance 40\nshot\nsets 1\n", 4, "after the first event"),
    ("rules ddbu\nrules ceb\n", 2, "given twice"),
    ("rules pool\n", 1, "rules must be"),
    ("rules ddbu\ndistance forty\n", 2, "whole number"),
    ("rules ddbu\ndistance 0\n", 2, "at least 1"),
    ("rules ddbu\ndistance 10 20 30\n", 2, "N or N M"),
    ("rules ceb\ndistance 10\nsets 4\nshot\n", 4, "sets must be 1, 3 or 5"),
    ("rules ddbu\ndistance 10\nsets 3\n\nshot\n", 5, "one game"),
    ("distance 10\nshot\n", 2, "no rules"),
    ("rules ddbu\nshot\n", 2, "no distance"),
    ("rules ddbu\ndistance 10\nundo\n", 3, "nothing to undo"),
    ("rules ddbu\ndistance 10\nundo 2\n", 3, "undo takes nothing"),
    ("rules ddbu\ndistance 10\nadjust 1 -2\n", 3, "below 0"),
    ("rules ddbu\ndistance 10\nadjust 3 2\n", 3, "player must be 1 or 2"),
    ("rules ddbu\ndistance 10\nadjust 1 x\n", 3, "whole number"),
    ("rules ddbu\ndistance 10\nadjust 1\n", 3, "adjust P N"),
    ("rules ddbu\ndistance 10\nshot\nshot pins=1,2,3,4,5\nshot\n", 5, "finished"),
    ("rules ddbu\ndistance 10\nshot\nshot pins=1,2,3,4,5\nadjust 1 2\n", 5, "finished"),
]


@pytest.mark.parametrize("text,line,message", BAD)
def test_bad_line_exit_2_message_on_stderr_nothing_on_stdout(tmp_path, capsys, text, line,
                                                             message):
    path = write(tmp_path, text)
    code, out, err = run(path, capsys=capsys)
    assert code == 2
    assert out == ""
    assert err.startswith("%s:%d: " % (path, line))
    assert message in err
    assert err.count("\n") == 1


def test_undo_after_the_game_is_finished_reopens_it(tmp_path, capsys):
    path = write(tmp_path, "rules ddbu\ndistance 10\nshot\nshot pins=1,2,3,4,5\nundo\nshot\n")
    code, out, err = run(path, capsys=capsys)
    assert code == 0
    assert json.loads(out)["status"] == "playing"


def test_not_utf8_is_a_bad_line(tmp_path, capsys):
    path = tmp_path / "b.shots"
    path.write_bytes(b"rules ddbu\ndistance 10\nshot \xff\n")
    code, out, err = run(path, capsys=capsys)
    assert (code, out) == (2, "")
    assert err == "%s:3: not UTF-8 text\n" % path


def test_crlf_and_comments_and_blank_lines(tmp_path, capsys):
    text = "# game\r\nrules ddbu # the rules\r\n\r\ndistance 10\r\nshot pins=2\r\n"
    path = write(tmp_path, text)
    code, out, err = run(path, capsys=capsys)
    assert code == 0
    assert json.loads(out)["score"] == [2, 0]


def test_bad_flag_and_missing_file_exit_2(tmp_path):
    path = write(tmp_path, "rules ddbu\ndistance 10\n")
    for args in (["--distance", "x"], ["--sets", "3,4"], ["--rules", "pool"]):
        proc = subprocess.run([sys.executable, "-m", "tools.replay", str(path), *args],
                              cwd=ROOT, capture_output=True, text=True)
        assert proc.returncode == 2 and proc.stdout == ""
    proc = subprocess.run([sys.executable, "-m", "tools.replay", str(tmp_path / "none")],
                          cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 2 and proc.stdout == "" and "cannot read" in proc.stderr


def test_micropython_flag_gives_byte_identical_output(tmp_path):
    path = GAMES[0]
    base = [sys.executable, "-m", "tools.replay", path, "--trace", "--first", "2"]
    a = subprocess.run(base, cwd=ROOT, capture_output=True, text=True)
    b = subprocess.run(base + ["--micropython"], cwd=ROOT, capture_output=True, text=True)
    assert a.returncode == b.returncode == 0
    assert a.stdout == b.stdout and a.stdout.count("\n") > 5
    bad = write(tmp_path, "rules ddbu\ndistance 10\nshot pins=9\n")
    a = subprocess.run(base[:3] + [str(bad)], cwd=ROOT, capture_output=True, text=True)
    b = subprocess.run(base[:3] + [str(bad), "--micropython"], cwd=ROOT, capture_output=True,
                       text=True)
    assert (a.returncode, a.stdout, a.stderr) == (b.returncode, b.stdout, b.stderr)
    assert b.returncode == 2


def test_script_module_parses_shot_words():
    rec = script.parse_shot(["pins=5,1", "casino", "foul=rouge,dehors"])
    assert rec == bytes([1, 0b10001 | 2 << 5, 0b10100, 0])


# ----- ceb two-man teams (CEB 28) and the marked ball (CEB 21) ------------------------------

TEAM_GAME = os.path.join(ROOT, "tests", "games", "ceb_teams_best_of_3.shots")


def annotated_states(path):
    """(line, members, marked) from the "=> members M1,M2 marked K" notes of a worked game."""
    notes = []
    with open(path) as f:
        for number, line in enumerate(f, 1):
            if "=>" in line and not line.startswith("#"):
                words = line.split("=>")[1].split()
                assert words[0] == "members" and words[2] == "marked", line
                notes.append((number, [int(m) for m in words[1].split(",")], int(words[3])))
    return notes


@pytest.mark.parametrize("micropython", [False, True], ids=["cpython", "micropython"])
def test_team_match_trace_changes_members_and_marked_as_the_rules_say(micropython):
    args = [sys.executable, "-m", "tools.replay", TEAM_GAME, "--trace"]
    proc = subprocess.run(args + (["--micropython"] if micropython else []), cwd=ROOT,
                          capture_output=True, text=True)
    assert (proc.returncode, proc.stderr) == (0, "")
    states = [json.loads(line) for line in proc.stdout.splitlines()]
    notes = annotated_states(TEAM_GAME)
    assert len(notes) == len(states) == 17
    for (line, members, marked), state in zip(notes, states, strict=True):
        assert (state["members"], state["marked"]) == (members, marked), "line %d" % line


def test_teams_flag_makes_a_singles_script_a_team_match(tmp_path, capsys):
    path = write(tmp_path, "rules ceb\ndistance 20\nsets 3\nshot pins=1\nshot pins=1,3\n")
    code, out, err = run(path, capsys=capsys)
    assert json.loads(out)["members"] is None and json.loads(out)["marked"] == 2
    code, out, err = run(path, "--teams", capsys=capsys)
    assert code == 0
    assert json.loads(out)["members"] == [2, 1]  # team 2 scored: team 1 changes its player


def test_marked_and_members_are_null_outside_ceb(tmp_path, capsys):
    for rules in ("ddbu", "russian"):
        path = write(tmp_path, "rules %s\ndistance 20\nshot pins=1\n" % rules)
        code, out, err = run(path, capsys=capsys)
        state = json.loads(out)
        assert (code, state["marked"], state["members"]) == (0, None, None)


TEAMS_BAD = [
    ("rules ddbu\ndistance 40\nteams 1\nshot\n", (), 3, "teams are played in ceb only"),
    ("rules russian\nteams 1\ndistance 40\n", (), 2, "teams are played in ceb only"),
    ("rules ceb\ndistance 40\nteams 2\nshot\n", (), 3, "teams must be 0"),
    ("rules ceb\ndistance 40\nteams\n", (), 3, "teams must be 0"),
    ("rules ceb\nteams 1\nteams 1\n", (), 3, "given twice"),
    ("rules ceb\ndistance 40\nshot\nteams 1\n", (), 4, "after the first event"),
    ("# russian\nrules russian\ndistance 40\nshot\n", ("--teams",), 2,
     "teams are played in ceb only"),
    ("rules ceb\ndistance 40\nteams 1\nshot\n", ("--rules", "ddbu"), 3,
     "teams are played in ceb only"),
]


@pytest.mark.parametrize("text,flags,line,message", TEAMS_BAD)
def test_bad_team_settings_exit_2_with_the_line(tmp_path, capsys, text, flags, line, message):
    path = write(tmp_path, text)
    code, out, err = run(path, *flags, capsys=capsys)
    assert (code, out) == (2, "")
    assert err.startswith("%s:%d: " % (path, line)) and message in err, err


def test_bad_team_settings_read_the_same_on_micropython(tmp_path):
    path = write(tmp_path, "rules russian\ndistance 40\nshot\n")
    base = [sys.executable, "-m", "tools.replay", str(path), "--teams"]
    a = subprocess.run(base, cwd=ROOT, capture_output=True, text=True)
    b = subprocess.run(base + ["--micropython"], cwd=ROOT, capture_output=True, text=True)
    assert (a.returncode, a.stdout, a.stderr) == (b.returncode, b.stdout, b.stderr)
    assert a.returncode == 2 and a.stderr.startswith("%s:1: " % path)
