"""At the table without a referee: raw input timelines through the real firmware on the
MicroPython unix port (tests/device/table_cases.py), checked against what a player sees on
the display and hears from the buzzer: the shot display (a capped shot, where FouL
stands), the castle check ("pins set?"), the next game in two presses, the audible calls.
"""

import json

import pytest
from helpers import micropython_value, run_on_micropython

pytestmark = pytest.mark.long(8)

CEB20 = {"rules": "ceb", "distance": [20, 20], "sets": 1, "first": 1, "teams": 0}
DDBU40 = {"rules": "ddbu", "distance": [40, 40], "sets": 1, "first": 1, "teams": 0}


def shots(*plays, start=1000, every=3000):
    """Timeline lines for shots, one every `every` ms: each play is a tuple of spot numbers
    that fall and stand up again, plus words: "casino" (hold carom), "carom", "foul"
    (press), "ok" (end the shot at once: a miss when nothing fell)."""
    lines = ["0 pins up 1 2 3 4 5"]
    t = start
    for play in plays:
        pins = [p for p in play if isinstance(p, int)]
        for spot in pins:
            lines.append("%d pin %d down" % (t, spot))
        if "carom" in play:
            lines.append("%d press carom" % (t + 50))
        if "casino" in play:
            lines.append("%d hold carom 1000" % (t + 50))
        if "foul" in play:
            lines.append("%d press foul" % (t + 1200))
        for spot in pins:
            lines.append("%d pin %d up" % (t + 300, spot))
        if "ok" in play:
            lines.append("%d press ok" % (t + 1400))
        t += every
    lines.sort(key=lambda line: int(line.split()[0]))  # stable: same times keep order
    return "\n".join(lines) + "\n"


SCENARIOS = {
    # CEB at 18 of 20: pin 4 and a casino make 5, of which 2 count (CEB 7.1); the opening
    # shot is a miss (its points would go to the opponent, CEB 11.4)
    "capped": (CEB20, shots(("ok",), ("ok",), (1, 2, 4, 5), ("ok",), (1, 2, 4, 5), ("ok",),
                            (1,), ("ok",), (4, "casino"))),
    # DDBU: player 1 misses, player 2 fouls: FouL on player 2's half
    "ddbu foul": (DDBU40, shots(("ok",), (1, "foul"))),
    # CEB: player 1 misses, player 2 fouls: FouL on player 2's half, +2 on player 1's
    "ceb foul": (CEB20, shots(("ok",), ("foul", "ok"))),
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    calls = [["table_run", [str(tmp_path_factory.mktemp("t%d" % i)), settings, text]]
             for i, (settings, text) in enumerate(SCENARIOS.values())]
    results = run_on_micropython("table_cases", calls, timeout=300)
    return {name: json.loads(json.dumps(micropython_value(result)))
            for name, result in zip(SCENARIOS, results, strict=True)}


def pictures(run):
    return [text for _, text in run["pictures"]]


def test_a_capped_shot_shows_what_counted_and_a_bar_that_it_was_capped(runs):
    out = runs["capped"]
    assert out["state"]["score"] == [20, 0] and out["state"]["winner"] == 1
    # the last shot: "\u203e+2" on player 1's half (the ring of the marked ball on
    # player 2's), never "+5"
    assert " \u203e+2\u00b0   " in pictures(out), pictures(out)
    assert not any("+5" in p for p in pictures(out))
    # an earlier shot that reached 16 of 20 was not capped: no bar
    assert " +8" in "".join(pictures(out)) or any("+8" in p for p in pictures(out))
    assert sum("\u203e" in p for p in pictures(out)) == 1


@pytest.mark.parametrize("name, foul_picture", [("ddbu foul", "    FouL"),
                                                 ("ceb foul", "  +2FouL")])
def test_foul_stands_on_the_half_of_the_player_who_fouled_in_every_rules(runs, name,
                                                                           foul_picture):
    out = runs[name]
    seen = [p.replace("\u00b0", " ") for p in pictures(out)]  # the marked ball aside
    assert foul_picture in seen, seen
    assert out["state"]["last"]["player"] == 2 and out["state"]["last"]["foul"]
