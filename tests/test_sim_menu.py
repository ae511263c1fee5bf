"""The setup menu in words, from the same source as its digits: a raw input timeline walks
every item (forwards, back, values changed, the wiring check) through the real firmware,
and every picture of `python -m tools.sim --display-log` (decoded from the emulated
display chips) is checked against the words the simulator writes beside it.
"""

import json
import re
import subprocess
import sys

from helpers import MENU_LINES, menu_item_read

CHECK_LINE = "wiring check: spots, buttons and every segment (hold undo to leave)"

# ceb, so that every item is offered (sets and singles or teams are ceb's only). Each line
# says what the display shows after it.
WALK = """\
0     pins up 1 2 3 4 5
3000  hold ok 1000       # d1 40
4500  press carom        # d1 50
5000  hold carom 1000    # d1 51
6500  press ok           # d2
7000  press ok           # FIrSt 1
7500  press ok           # rULE  CEb
8500  press ok           # SEtS 1
9000  press carom        # SEtS 3
9500  press ok           # PLAy 1-1
10000 press carom        # PLAy 2-2
10500 press ok           # tESt  no
11000 press carom        # tESt yES
11500 press foul         # tESt  no
12000 press ok           # nEW   no
12500 press undo         # tESt  no
13000 press undo         # PLAy
13500 press ok           # tESt  no
14000 press ok           # nEW   no
14500 press carom        # nEW  yES
15000 press carom        # nEW   no
15500 press carom        # nEW  yES
16000 press ok           # the new game: ceb 51/40, best of 3, two-man teams
18000 hold ok 1000       # the menu again: d1
19500 press ok           # d2
20000 press ok           # FIrSt
20500 press ok           # rULE
21000 press ok           # SEtS
21500 press ok           # PLAy
22000 press ok           # tESt  no
22500 press carom        # tESt yES
23000 press ok           # the wiring check: the segment sweep, then 12345 CH
33000 hold undo 1000     # left once let go: the game again
"""


def test_every_menu_item_is_named_by_the_item_its_digits_show(tmp_path):
    path = tmp_path / "walk.timeline"
    path.write_text(WALK)
    proc = subprocess.run(
        [sys.executable, "-m", "tools.sim", "--timeline", str(path), "--rules", "ceb",
         "--display-log"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    log = [re.fullmatch(r"display (\d+): \[(.*)\](?:  (.*))?", line)
           for line in proc.stderr.splitlines() if line.startswith("display ")]
    assert log and all(log), proc.stderr
    items = []
    checking = False
    for match in log:
        at, text, words = int(match[1]), match[2], match[3]
        item = menu_item_read(text)
        if item is not None:  # a menu picture is named by its own item, at once
            assert words == MENU_LINES[item], "at %d ms [%s] under %r" % (at, text, words)
            if not items or items[-1] != item:
                items.append(item)
        elif words == CHECK_LINE:
            checking = True
        else:  # no menu words over any other picture
            assert words is None, "at %d ms [%s] under %r" % (at, text, words)
        if text == "12345 CH":
            assert words == CHECK_LINE  # the check's own picture, with its words
    assert items == ["d1", "d2", "first", "rules", "sets", "teams", "check", "new", "check",
                     "teams", "check", "new",
                     "d1", "d2", "first", "rules", "sets", "teams", "check"]
    assert checking and log[-1][3] is None  # the wiring check was named, and left
    final = json.loads(proc.stdout)
    assert (final["rules"], final["distance"], final["best_of"]) == ("ceb", [51, 40], 3)
    assert final["members"] is not None  # two-man teams
