"""tools.sim on hostile input: long timelines, huge times, unusable --state and --db.

Every bad input is exit status 2 with one clear message and no traceback, and changes
nothing it was given (an image or a database someone may want back)."""

import hashlib
import os
import sqlite3
import subprocess
import sys

import pytest

from tools.sim import front as sim_tool
from tools.sim.board import idle, timeline
from tools.sim.timelines import build, random_game

pytestmark = pytest.mark.long(6)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(module, *args, timeout=300):
    return subprocess.run([sys.executable, "-m", module, *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout)


def replay_of(tmp_path, script):
    path = tmp_path / "game.shots"
    path.write_text(script)
    proc = run("tools.replay", path)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def assert_refused(proc, *words):
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert proc.stdout == ""
    assert "Traceback" not in proc.stderr
    for word in words:
        assert word in proc.stderr, proc.stderr


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


# -- timelines ------------------------------------------------------------------------------------


def test_a_timeline_of_6000_lines_plays(tmp_path):
    lines = ["0 pins up 1 2 3 4 5"]
    lines += ["%d pins up 1 2 3 4 5   # all standing still" % (k // 2) for k in range(6000)]
    lines += ["4000 pin 3 down", "4100 pin 3 up", "9000 press ok"]
    path = tmp_path / "long.timeline"
    path.write_text("\n".join(lines) + "\n")
    proc = run("tools.sim", "--timeline", path, "--rules", "ddbu", "--distance", "40")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout == replay_of(tmp_path, "rules ddbu\ndistance 40\nshot pins=3\nshot\n")


def test_days_of_idle_between_shots_play_like_the_shots(tmp_path):
    # Eight shots 23 hours apart: almost a week at the table. The firmware must see the
    # time pass (pins settle, shots commit, turns pass) exactly as replay scores it.
    events = random_game("ddbu", 5, length=8, distance=(60, 60))
    text, script = build("ddbu", events, distance=(60, 60), gap_ms=23 * 3600 * 1000)
    assert int(text.splitlines()[-1].split()[0]) > 6 * 24 * 3600 * 1000
    path = tmp_path / "week.timeline"
    path.write_text(text)
    proc = run("tools.sim", "--timeline", path, "--rules", "ddbu", "--distance", "60,60",
               "--show-display")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout == replay_of(tmp_path, script)


@pytest.mark.parametrize("line,number", [
    ("1000000000 press ok", 1),
    ("604800001 pin 2 down", 1),
    ("604800000 press ok", 1),      # the press would end past the limit
    ("604799000 hold foul 5000", 1),
    ("99999999999999999999999999 press ok", 1),
])
def test_times_past_a_week_are_a_bad_line(tmp_path, line, number):
    path = tmp_path / "far.timeline"
    path.write_text(line + "\n")
    proc = run("tools.sim", "--timeline", path, timeout=120)
    assert_refused(proc, "%s:%d:" % (path, number), "604800000 ms (7 days)")


def test_a_week_is_allowed(tmp_path):
    path = tmp_path / "week.timeline"
    path.write_text("0 pins up 1 2 3 4 5\n604799800 press ok\n")
    proc = run("tools.sim", "--timeline", path, "--rules", "ddbu", "--distance", "40")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout == replay_of(tmp_path, "rules ddbu\ndistance 40\nshot\n")


def test_timeline_lines_read_like_shot_script_lines():
    plain = "0 pins up 1 2 3 4 5\n1200 pin 2 down\n1300 pin 2 up\n3000 press ok\n"
    want = timeline.parse(plain)
    for data in (b"\xef\xbb\xbf" + plain.encode(), plain.replace("\n", "\r").encode(),
                 plain.replace("\n", "\r\n").encode()):
        assert timeline.parse(data) == want
    for text, message in (("0 pins up\n\u0661\u0660 press ok\n", "2: character U+0661"),
                          ("0\u00a0press ok\n", "1: character U+00A0 (column 2)"),
                          ("0 press ok # " + "x" * 5000 + "\n", "1: line longer than 4096")):
        with pytest.raises(ValueError) as e:
            timeline.parse(text)
        assert str(e.value).startswith(message)


class _Chip:
    frames = 0


class _Sim:
    chips = [_Chip()]


class _App:
    class sensors:
        stuck_ms = 180000

    def __init__(self):
        self.changes = 0  # firmware.app.App counts the game's changes


def test_idle_jumps_keep_the_whole_schedule_running_in_strides():
    levels = timeline.Levels(timeline.parse("0 pins up 1 2 3 4 5\n50000000 press ok\n"))
    app = _App()
    ticks = []
    skip = idle.IdleSkip(_Sim(), app, levels, lambda a, t: ticks.append(t), 5)
    t = 0
    while t < 50_000_000:
        levels.advance(t)
        ticks.append(t)
        t = skip.next_time(t + 5, 50_010_000)
    assert skip.jumps == 1
    assert ticks == sorted(ticks)
    strides = [(a, b) for a, b in zip(ticks, ticks[1:], strict=False) if b - a != 5]
    assert len(strides) > 800
    assert strides[0][0] <= idle.QUIET_MS + 1000  # quiet for QUIET_MS: the jump starts
    assert max(b - a for a, b in strides) == idle.STRIDE_MS
    # every stride lands on a multiple of every task period (5, 10, 40, 250 ms): the
    # board's whole schedule runs there, upkeep and the watchdog feed included
    assert all(a % 1000 == 0 and b % 1000 == 0 for a, b in strides)
    assert strides[-1][1] == 49_999_000  # stepping again a second before the press
    assert 49_999_000 < ticks[-1] < 50_000_000

    # a change seen at a stride (a command from the host, say) stops the jump there
    levels = timeline.Levels(timeline.parse("0 pins up 1 2 3 4 5\n50000000 press ok\n"))
    ticks = []

    def tick(a, t):
        ticks.append(t)
        if t >= 3 * idle.STRIDE_MS:
            app.changes += 1

    skip = idle.IdleSkip(_Sim(), app, levels, tick, 5)
    levels.advance(0)
    assert skip.next_time(0, 50_010_000) == 0
    t = skip.next_time(idle.QUIET_MS, 50_010_000)
    assert t == idle.QUIET_MS + 3 * idle.STRIDE_MS + 5


def test_a_spot_left_down_holds_the_jump_back_until_its_stuck_time():
    levels = timeline.Levels(timeline.parse("0 pins up 1 2 3 4 5\n10 pin 2 down\n"
                                            "50000000 pin 2 up\n"))
    app = _App()
    jumped = []
    skip = idle.IdleSkip(_Sim(), app, levels, lambda a, t: jumped.append(t), 5)
    t = 0
    while not skip.jumps:
        levels.advance(t)
        t = skip.next_time(t + 5, 50_010_000)
    assert app.sensors.stuck_ms + idle.QUIET_MS <= jumped[0] <= (
        app.sensors.stuck_ms + idle.QUIET_MS + 1000)


# -- --state --------------------------------------------------------------------------------------

TIMELINE = "0 pins up 1 2 3 4 5\n1000 press ok\n"


@pytest.fixture
def game(tmp_path):
    path = tmp_path / "ok.timeline"
    path.write_text(TIMELINE)
    return path


def test_a_file_where_the_state_folder_should_be(tmp_path, game):
    state = tmp_path / "state"
    state.write_text("notes")
    assert_refused(run("tools.sim", "--timeline", game, "--state", state),
                   "--state", "is a file, not a folder")
    assert state.read_text() == "notes"
    assert_refused(run("tools.sim", "--timeline", game, "--state", state / "inner"),
                   "--state", "is a file, not a folder")


def test_a_folder_where_the_image_should_be(tmp_path, game):
    state = tmp_path / "state"
    (state / "flash.img").mkdir(parents=True)
    assert_refused(run("tools.sim", "--timeline", game, "--state", state),
                   "flash.img is a folder, not a flash image", "fresh flash")


def test_an_image_another_simulator_is_making_is_in_use_not_short(tmp_path, game):
    """A simulator that holds the folder may still be making its image, which then looks
    short: a second one says the folder is in use, and leaves the image alone."""
    state = tmp_path / "state"
    state.mkdir()
    image = state / "flash.img"
    image.write_bytes(bytes(sim_tool.IMAGE_BYTES // 2))  # being made by the holder
    held = sim_tool.lock_state(str(state))
    try:
        proc = run("tools.sim", "--timeline", game, "--state", state)
        assert_refused(proc, "--state", "in use by another simulator")
        assert "not a flash image" not in proc.stderr
        assert image.stat().st_size == sim_tool.IMAGE_BYTES // 2
    finally:
        os.close(held)


@pytest.mark.parametrize("kind", ["zeros", "noise", "short"])
def test_an_unreadable_image_is_refused_and_left_alone(hostile_report, tmp_path, game, kind):
    state = tmp_path / "state"
    state.mkdir()
    image = state / "flash.img"
    size = sim_tool.IMAGE_BYTES
    image.write_bytes({"zeros": bytes(size), "noise": os.urandom(size),
                       "short": os.urandom(1000)}[kind])
    before = digest(image)
    proc = run("tools.sim", "--timeline", game, "--state", state)
    assert_refused(proc, "--state", str(image), "fresh flash", "move it away")
    assert digest(image) == before
    hostile_report("sim: unreadable --state images", given=1, refused=1, unchanged=1)
    if kind == "zeros":  # the interactive table refuses it the same way
        proc = subprocess.run([sys.executable, "-m", "tools.sim", "--state", str(state)],
                              cwd=ROOT, capture_output=True, text=True, timeout=120,
                              stdin=subprocess.DEVNULL)
        assert proc.returncode == 2 and "fresh flash" in proc.stderr
        assert "Traceback" not in proc.stderr
        assert digest(image) == before


def test_an_erased_image_is_formatted_like_a_new_board(tmp_path, game):
    state = tmp_path / "state"
    state.mkdir()
    (state / "flash.img").write_bytes(b"\xff" * sim_tool.IMAGE_BYTES)
    proc = run("tools.sim", "--timeline", game, "--state", state, "--rules", "ddbu",
               "--distance", "40")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert digest(state / "flash.img") != hashlib.sha256(
        b"\xff" * sim_tool.IMAGE_BYTES).hexdigest()


# -- --db -----------------------------------------------------------------------------------------


def test_a_file_that_is_not_sqlite_is_refused_and_left_alone(hostile_report, tmp_path, game):
    db = tmp_path / "games.db"
    db.write_text("my notes, not a database\n")
    assert_refused(run("tools.sim", "--timeline", game, "--db", db),
                   "--db", "not an SQLite database")
    assert db.read_text() == "my notes, not a database\n"
    hostile_report("sim: a --db file that is not SQLite", given=1, refused=1, unchanged=1)


def test_a_file_as_the_database_folder_and_a_folder_as_the_database(tmp_path, game):
    (tmp_path / "notes").write_text("x")
    assert_refused(run("tools.sim", "--timeline", game, "--db", tmp_path / "notes" / "g.db"),
                   "--db", "notes is a file, not a folder")
    assert_refused(run("tools.sim", "--timeline", game, "--db", tmp_path),
                   "--db", "is a folder, not a database file")


def test_a_read_only_folder_for_the_database(tmp_path, game, monkeypatch):
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        if os.geteuid() != 0:  # root writes into read-only folders: the check cannot fail
            assert_refused(run("tools.sim", "--timeline", game, "--db", folder / "g.db"),
                           "--db", "read-only")
        real_access = os.access
        monkeypatch.setattr(sim_tool.os, "access",
                            lambda p, mode: False if str(p) == str(folder) else real_access(
                                p, mode))
        assert "is read-only" in sim_tool.db_problem(str(folder / "g.db"))
        assert "is read-only" in sim_tool.state_problem(str(folder))
        assert not (folder / "g.db").exists()
    finally:
        folder.chmod(0o755)


def test_a_good_database_still_works(tmp_path, game):
    db = tmp_path / "deep" / "er" / "games.db"
    proc = run("tools.sim", "--timeline", game, "--db", db, "--rules", "ddbu",
               "--distance", "40")
    assert proc.returncode == 0, proc.stderr[-2000:]
    with sqlite3.connect(db) as con:
        assert con.execute("select count(*) from sqlite_master").fetchone()[0] > 0
