"""One table of traits per rules id (rules_core.settings.RULES_TABLE), read by every part.

Every row is whole (a scoring module, limits the display can show, a second foul code the
event records keep by name, a menu word the 7-segment font can draw, a name for the web);
a rules system added as one more row is played, set up and shown by every part with no
other change (a copy of rules_core with a fourth row, in a process of its own); and no
part outside rules_core tells rules ids apart by comparing them with their names.
"""

import ast
import importlib
import os
import re
import shutil
import subprocess
import sys

from boardlib import font
from rules_core.events import FOUL_NAMES
from rules_core.savedstate import _RULES_MASK
from rules_core.settings import (
    MAX_DISTANCE,
    OPENING,
    RULES_IDS,
    RULES_TABLE,
    has,
    max_distance,
    menu_word,
    rules_name,
    second_foul,
)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_every_row_is_whole():
    assert len(set(RULES_IDS)) == len(RULES_IDS) == len(RULES_TABLE)
    assert len(RULES_IDS) <= _RULES_MASK + 1  # the saved state has room for its number
    for rules in RULES_IDS:
        assert rules.isascii() and rules.isalnum() and rules == rules.lower()
        scoring = RULES_TABLE[RULES_IDS.index(rules)][1]  # its module in rules_core
        assert callable(importlib.import_module("rules_core." + scoring).shot)
        # four digits on a player's half; three where a cell carries the marked ball
        assert 1 <= max_distance(rules) <= (999 if has(rules, OPENING) else 9999)
        assert second_foul(rules) in FOUL_NAMES  # a journal record keeps it by name
        assert font.cells(menu_word(rules)) == 4  # "rULE" and the word fill the display
        assert rules_name(rules) and rules_name(rules) != rules and rules_name(rules, True)
    assert MAX_DISTANCE == max(max_distance(r) for r in RULES_IDS)
    assert rules_name("snooker") == "snooker" and not has("snooker", OPENING)


# A fourth rules system, added as the docs say: one row (here it scores as ddbu does).
FOURTH_ROW = ('    ("fourth", "ddbu", 500, SETS | TEAMS, "rouge", "4tH ", "4th",'
              ' "The fourth game"),\n')

EVERY_PART = r'''
import json, random
from rules_core import Game
from rules_core.settings import RULES_IDS, check_settings
from boardlib import font, shot
from boardlib.inputs import HOLD, PRESS
from firmware.menu import CAROM, FOUL, OK, Menu
from tools.replay import shotscript
from tools.sim import timelines
from tools.sim import words
from tools.sim.board.chips import decode_segments
from tools.logger.__main__ import _new_game
from tools.club.pages import new_game_settings

out = {"ids": list(RULES_IDS)}
game = Game("fourth", 40, sets=3, teams=1)
game.shot(pins=0b11, carom=0, fouls=("rouge",))
out["state"] = game.state()
asm = shot.ShotAssembler(settle_ms=10)
asm.button(shot.FOUL, HOLD, 0)
asm.button(shot.OK, PRESS, 1)
asm.poll(2)
out["held_foul"] = [shot.SECOND_FOUL["fourth"]] * asm.foul_holds  # its one held foul
menu = Menu({"rules": "russian", "distance": (600, 600)})
menu.button(OK, PRESS), menu.button(OK, PRESS), menu.button(OK, PRESS)  # d1 d2 first: rules
menu.button(CAROM, PRESS)
buf = bytearray(8)
menu.draw(buf)
out["menu"] = "".join(decode_segments(b) for b in buf)
out["menu_distance"] = menu.distance
menu.button(OK, PRESS)
out["menu_item"] = menu.item
out["check"] = check_settings("fourth", (40, 40), 5, 1, 1)
out["script"] = json.loads(shotscript.play("rules fourth\ndistance 30\nsets 3\nshot pins=1\n"
                                           )[-1])["score"]
out["timeline"] = len(timelines.random_game("fourth", 1, length=5))
out["words"] = words.BUTTONS[1][3]  # what a held foul is, in the simulator and the card
out["logger"] = list(_new_game("fourth:40:3:teams"))
out["club"] = list(new_game_settings({"rules": "fourth", "distance": "40", "sets": "3"}))
print(json.dumps(out))
'''


def test_a_fourth_rules_system_is_one_row(tmp_path):
    copy = tmp_path / "rules_core"
    shutil.copytree(os.path.join(ROOT, "rules_core"), copy,
                    ignore=shutil.ignore_patterns("__pycache__"))
    settings = (copy / "settings.py").read_text()
    end = settings.index("\n)\n", settings.index("RULES_TABLE = ("))
    (copy / "settings.py").write_text(settings[:end + 1] + FOURTH_ROW + settings[end + 1:])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join((str(tmp_path), ROOT)))
    out = subprocess.run([sys.executable, "-c", EVERY_PART], cwd=str(tmp_path), env=env,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    import json

    got = json.loads(out.stdout)
    assert got["ids"] == list(RULES_IDS) + ["fourth"]
    state = got["state"]  # ddbu's scoring: a foul scores nothing and the turn passes
    assert state["rules"] == "fourth" and state["best_of"] == 3 and state["members"] == [1, 1]
    assert state["score"] == [0, 0] and state["turn"] == 2 and state["last"]["foul"]
    assert got["held_foul"] == ["rouge"]
    assert got["menu"] == "rULE4tH " and got["menu_distance"] == [500, 500]
    assert got["menu_item"] == 5  # the sets item is not skipped: the row plays sets
    assert got["check"] is None
    assert got["script"] == [2, 0]
    assert got["timeline"] >= 1
    assert "rouge (4th)" in got["words"]
    assert got["logger"] == ["fourth", [40, 40], 3, 1, 1]
    assert got["club"] == ["fourth", [40, 40], 3, 1, 0]


# Where a rules id may stand as a literal outside rules_core: data people see or choose
# (what the demo tables and the sample season play, the docs' screenshots, the club
# bench's tables). A new board's default game and the benches' long game are the table's
# first row (boardlib.config.defaults, tools.sim.board.shots.LONG_SETTINGS).
DATA = {"tools/club/demo.py", "tools/testing/sample.py", "tools/testing/screens.py",
        "tools/testing/clubbench.py"}


def _product_files():
    for top in ("boardlib", "firmware", "tools"):
        for folder, _, names in os.walk(os.path.join(ROOT, top)):
            for name in names:
                if name.endswith((".py", ".js", ".html")):
                    yield os.path.relpath(os.path.join(folder, name), ROOT)


def _literals(path):
    """The rules ids written as string literals in a file, docstrings left out."""
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        text = f.read()
    if not path.endswith(".py"):
        return [m.group(1) for m in re.finditer(r"""["'](%s)["']""" % "|".join(RULES_IDS),
                                                text)]
    tree = ast.parse(text)
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value,
                                                                      ast.Constant):
                docstrings.add(id(body[0].value))
    return [node.value for node in ast.walk(tree) if isinstance(node, ast.Constant)
            and node.value in RULES_IDS and id(node) not in docstrings]


def test_no_part_tells_rules_ids_apart_by_name():
    found = {path: _literals(path) for path in _product_files() if path not in DATA}
    assert {path: ids for path, ids in found.items() if ids} == {}
