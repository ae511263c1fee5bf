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
DDBU24 = dict(DDBU40, distance=[24, 24])
BUZZER = {"buzzer_pin": 2}
MENU_OFF = """\
0     pins up 1 2 3 4 5
1000  pin 1 down
1300  pin 1 up
5000  hold ok 1000       # the menu: d1
6500  press ok           # d2
7000  press ok           # FIrSt
7500  press ok           # rULE
8000  press ok           # bEEP  on (ddbu: no sets, no teams)
8500  press carom        # bEEP oFF
9000  press ok           # tESt  no
9500  press ok           # nEW   no
10000 press ok           # the game again
12000 pin 2 down
12300 pin 2 up
"""


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
        if "undo" in play:
            lines.append("%d press undo" % t)
        t += every
    lines.sort(key=lambda line: int(line.split()[0]))  # stable: same times keep order
    return "\n".join(lines) + "\n"


# ddbu to 4: player 1 makes it at once, player 2's last series misses: player 1 has won.
# Then the next game in two presses: hold ok (AGAIn), ok.
FINISHED_4 = shots((1, 2), ("ok",))
AGAIN = FINISHED_4 + """\
9000  hold ok 1000       # AGAIn
10500 press ok           # the same game again; player 2 breaks
12000 pin 3 down
12300 pin 3 up
"""
# After a finished game, the rules changed and ok pressed through every item: the new game
# starts (before, the last ok fell on "nEW no" and left the finished game on the board).
THROUGH = FINISHED_4 + """\
9000  hold ok 1000       # AGAIn
10500 press carom        # on to the settings: d1 4
11000 press carom        # d1 14
11500 press ok           # d2
12000 press ok           # FIrSt 2
12500 press ok           # rULE ddbu
13000 press carom        # rULE CEb
13500 press ok           # SEtS
14000 press ok           # PLAy
14500 press ok           # tESt  no
15000 press ok           # nEW  yES
15500 press ok           # the new game
"""

# Pins set? Player 1's pins 1 and 2 fall, pin 1 is stood up, the shot is ended with ok
# while pin 2 lies; player 1 shoots again (pin 3) before pin 2 is set: that shot is marked.
# Pin 2 is set, and the next shot (pin 4) is not marked.
CASTLE = """\
0     pins up 1 2 3 4 5
1000  pin 1 down
1000  pin 2 down
1300  pin 1 up
2500  press ok           # ends the shot: 4 points, pin 2 still lying
9000  pin 3 down         # a shot begun with spot 2 empty
9300  pin 3 up
13000 pin 2 up           # the castle is complete again
15000 pin 4 down
15300 pin 4 up
"""

SCENARIOS = {
    # CEB at 18 of 20: pin 4 and a casino make 5, of which 2 count (CEB 7.1); the opening
    # shot is a miss (its points would go to the opponent, CEB 11.4)
    "capped": (CEB20, shots(("ok",), ("ok",), (1, 2, 4, 5), ("ok",), (1, 2, 4, 5), ("ok",),
                            (1,), ("ok",), (4, "casino"))),
    # DDBU: player 1 misses, player 2 fouls: FouL on player 2's half
    "ddbu foul": (DDBU40, shots(("ok",), (1, "foul"))),
    # CEB: player 1 misses, player 2 fouls: FouL on player 2's half, +2 on player 1's
    "ceb foul": (CEB20, shots(("ok",), ("foul", "ok"))),
    # the buzzer on GPIO 2 (board.cfg): every call of a ddbu game to 24
    "calls": (DDBU24, shots(("undo",), (1, 2), (1,), ("ok",), ("foul", "ok"), (1, 2, 3, 4, 5),
                            (1, 2, 3, 4), ("ok",)), BUZZER),
    # the same with "buzzer": false in board.cfg: silent
    "calls off": (DDBU24, shots((1, 2), ("ok",)), dict(BUZZER, buzzer=False)),
    # bEEP oFF in the setup menu: silent from then on, and kept in board.cfg
    "menu off": (DDBU24, MENU_OFF, BUZZER),
    "again": (dict(DDBU40, distance=[4, 4]), AGAIN),
    "through": (dict(DDBU40, distance=[4, 4]), THROUGH),
    "castle": (DDBU40, CASTLE),
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    calls = [["table_run", [str(tmp_path_factory.mktemp("t%d" % i)), settings, text, 6000,
                            json.dumps(config) if config else None]]
             for i, (settings, text, config) in enumerate(
                 (*scenario, None)[:3] for scenario in SCENARIOS.values())]
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


def test_the_buzzer_calls_the_game_as_the_pwm_decodes_it(runs):
    out = runs["calls"]
    assert out["state"]["winner"] == 1
    assert out["heard"] == ["error", "20-remaining", "scored", "turn", "foul", "scored",
                            "distance", "game"]
    # each call starts with the event: the first shot's pins stood up at 4300 ms and the
    # shot ended once they had been quiet for the settle time (1.5 s)
    starts = [tone[0] for tone in out["tones"]]
    assert 4300 + 1500 <= starts[2] <= 4300 + 1500 + 60
    # a call never holds up the inputs: the game went on as the rules say
    assert out["state"]["score"] == [24, 0] and out["state"]["shots"] == 7


def test_buzzer_false_in_board_cfg_is_silent(runs):
    out = runs["calls off"]
    assert out["heard"] == [] and out["state"]["score"] == [4, 0]


def test_beep_off_in_the_setup_menu_silences_the_board_and_is_kept(runs):
    out = runs["menu off"]
    seen = pictures(out)
    assert "bEEP  on" in seen and "bEEP oFF" in seen
    assert out["heard"] == ["scored"]  # the shot before the menu; none after it
    assert out["state"]["score"] == [4, 0]
    assert out["config"] == {"buzzer_pin": 2, "buzzer": False}


def test_the_next_game_in_two_presses_with_the_other_player_breaking(runs):
    out = runs["again"]
    assert "AGAIn   " in pictures(out)
    st = out["state"]
    # the same game (rules, distances), player 2 breaks (seed 000 2: the lag; at a table
    # without a referee the players take turns), and it is being played: pin 3 scored
    assert st["rules"] == "ddbu" and st["distance"] == [4, 4] and st["first"] == 2
    assert st["score"] == [0, 2] and st["winner"] is None and not out["menu"]


def test_ok_through_the_menu_after_a_finished_game_starts_the_new_game(runs):
    out = runs["through"]
    seen = pictures(out)
    assert "nEW  yE5" in seen and "nEW   no" not in seen
    st = out["state"]
    assert st["rules"] == "ceb" and st["distance"] == [14, 4] and st["first"] == 2
    assert st["winner"] is None and st["shots"] == 0 and not out["menu"]


def test_pins_set_shows_the_empty_spots_and_marks_a_shot_begun_before(runs):
    out = runs["castle"]
    shown = out["pictures"]
    # between the shots: spot 2 empty, on player 1's side (at the table), in turns with
    # the scores
    between = [at for at, text in shown if text == " .2   Pin"]
    assert between and all(2500 < at < 9000 or 11000 < at < 13000 for at in between), shown
    assert any(text == " .  4   0" and 2500 < at < 9000 for at, text in shown)
    # the marked shot: spot 2 was empty when it began, shown first, then its points
    marked = [at for at, text in shown if text == " 2   no "]
    assert marked and 9300 < marked[0] < 11000, shown
    assert any(text.startswith("  +2") and marked[0] < at for at, text in shown)
    # it scores as the rules say; the mark is in the event record (bit 7 of its 2nd byte)
    assert out["state"]["score"] == [8, 0]
    assert out["records"] == ["01030000", "01840000", "01080000"]
    assert not any("Pin" in text for at, text in shown if at > 13000)


@pytest.mark.parametrize("rules", ["ddbu", "ceb", "russian"])
def test_the_unset_mark_never_changes_how_a_shot_scores(rules):
    from rules_core import Game, events

    plays = [(0b00101, 1, ()), (0b00100, 0, ()), (0, 1, ()), (0b11111, 0, ("foul",)),
             (0b01000, 2, ()), (0, 0, ())]
    marked, plain = Game(rules, (200, 200)), Game(rules, (200, 200))
    for i, (pins, carom, fouls) in enumerate(plays):
        record = marked.shot(pins, carom, fouls, unset=i % 2 == 0)
        plain.shot(pins, carom, fouls)
        assert events.is_unset(record) == (i % 2 == 0)
        assert marked.state() == plain.state()
    marked.undo()
    plain.undo()
    assert marked.state() == plain.state()
