"""The simulated table with the host logger on the far end of a pty (CONTRACT §4 --db).

`tools.sim --timeline F --db DB` runs the firmware on the unix port and the logger against
it, and exits once the logger has stored the final state; `tools.logger export` must then
give back exactly what `tools.replay` computes from the same shots, for every rules id.
"""

import json
import subprocess
import sys

import pytest

from tools.sim.timelines import build, random_game

pytestmark = pytest.mark.long(4)

SETS = {"ddbu": 1, "ceb": 5, "russian": 1}


def run(args):
    return subprocess.run(
        [sys.executable, "-m", *args], capture_output=True, text=True, timeout=300
    )


@pytest.mark.parametrize("rules", ["ddbu", "ceb", "russian"])
def test_exported_final_state_equals_replay(tmp_path, rules):
    events = random_game(rules, 2024, length=40, distance=(30, 30), sets=SETS[rules])
    timeline, script = build(rules, events, distance=(30, 30), sets=SETS[rules])
    (tmp_path / "g.timeline").write_text(timeline)
    (tmp_path / "g.shots").write_text(script)
    db = tmp_path / "games.db"
    proc = run([
        "tools.sim", "--timeline", str(tmp_path / "g.timeline"), "--rules", rules,
        "--distance", "30", "--sets", str(SETS[rules]), "--db", str(db),
    ])
    assert proc.returncode == 0, proc.stderr
    expected = run(["tools.replay", str(tmp_path / "g.shots")])
    assert proc.stdout == expected.stdout

    export = run(["tools.logger", "export", "--db", str(db)])
    assert export.returncode == 0, export.stderr
    games = [json.loads(line) for line in export.stdout.splitlines()]
    assert len(games) == 1
    assert games[0]["final"] == json.loads(expected.stdout)
    # every scored shot is in the store once, numbered in order
    final = games[0]["final"]
    numbers = [shot["number"] for shot in games[0]["shots"]]
    assert numbers[-1] == final["shots"]
    assert sorted(set(numbers)) == numbers

    stats = run(["tools.logger", "stats", "--db", str(db)])
    assert stats.returncode == 0, stats.stderr
    assert len(stats.stdout.splitlines()) == 3  # a header and one line per player
