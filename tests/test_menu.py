"""The setup menu worked with the four buttons (HARDWARE.md: setting up a game needs no laptop)."""

from boardlib.inputs import HOLD, PRESS
from firmware.menu import CAROM, FOUL, ITEMS, OK, UNDO, Menu
from rules_core.settings import MAX_DISTANCE, MIN_DISTANCE, max_distance
from tools.sim.board.chips import decode_segments

START = {"rules": "ddbu", "distance": (40, 40), "sets": 1, "first": 1}


def press(menu, *buttons, kind=PRESS):
    result = None
    for b in buttons:
        result = menu.button(b, kind)
    return result


def test_walk_through_every_item_and_start_a_ceb_match():
    m = Menu(START)
    press(m, CAROM, CAROM)  # d1: 40 -> 60 (the distances first: changed most)
    press(m, OK, FOUL)  # d2: 40 -> 30
    press(m, OK, CAROM)  # first 1 -> 2
    press(m, OK, CAROM)  # rules: ddbu -> ceb
    assert m.rules == "ceb"
    press(m, OK, CAROM)  # sets 1 -> 3
    press(m, OK)  # singles or teams: singles
    press(m, OK)  # wiring check: no (no buzzer: no bEEP item)
    press(m, OK, CAROM)  # new game: no -> yes
    settings = press(m, OK)
    assert settings == {"rules": "ceb", "distance": (60, 30), "sets": 3, "first": 2,
                        "teams": 0}
    assert m.closed


def text(m):
    buf = bytearray(8)
    m.draw(buf)
    return "".join(decode_segments(b) for b in buf)


def test_ceb_offers_singles_or_two_man_teams():
    m = Menu(START)
    press(m, OK, OK, OK, CAROM, OK, OK)  # d1, d2, first, rules: ceb, sets -> teams
    assert text(m) == "PLAy 1-1"
    press(m, CAROM)
    assert text(m) == "PLAy 2-2"
    press(m, OK, OK, CAROM)  # the wiring check, new game: yes
    assert press(m, OK) == {"rules": "ceb", "distance": (40, 40), "sets": 1, "first": 1,
                            "teams": 1}
    m = Menu(dict(START, rules="ceb", teams=1))  # the menu opens on the game's setting
    press(m, OK, OK, OK, FOUL)  # rules: ceb -> ddbu: teams mean nothing there
    assert m.settings()["teams"] == 0


def test_hold_steps_distance_by_one_press_by_ten():
    m = Menu(START)
    press(m, CAROM, kind=HOLD)
    press(m, CAROM)
    assert m.distance[0] == 51


def test_sets_item_is_skipped_outside_ceb():
    m = Menu(START)
    press(m, OK, OK, OK, OK)  # d1 -> d2 -> first -> rules -> (sets, teams skipped) check
    assert ITEMS[m.item] == "check"
    press(m, UNDO)
    assert ITEMS[m.item] == "rules"  # back to the rules, again skipping them


def test_new_game_defaults_to_no_and_undo_from_the_start_leaves():
    m = Menu(START)
    press(m, OK, OK, OK, OK, OK)
    assert ITEMS[m.item] == "new"
    assert press(m, OK) is None and m.closed and not m.check  # "nEW no": nothing changes
    m = Menu(START)
    assert press(m, UNDO) is None and m.closed


def test_distance_stays_within_the_rules_core_bounds():
    m = Menu(START)
    for _ in range(10):
        press(m, FOUL)
    assert m.distance[0] == MIN_DISTANCE
    for _ in range(1000):
        press(m, CAROM)
    assert m.distance[0] == MAX_DISTANCE
    press(m, OK, OK, OK, CAROM)  # rules: ddbu -> ceb, where a score has three digits
    assert m.settings()["distance"] == (max_distance("ceb"), 40)


def test_the_wiring_check_item_opens_the_check_only_on_yes():
    m = Menu(START)
    press(m, OK, OK, OK, OK)  # d1, d2, first, rules, (sets, teams skipped) -> check
    buf = bytearray(8)
    assert ITEMS[m.item] == "check"
    m.draw(buf)
    assert font_text(buf) == "tE5t  no"
    press(m, CAROM)
    m.draw(buf)
    assert font_text(buf) == "tE5t yE5"
    assert press(m, OK) is None
    assert m.closed and m.check  # the app opens the check; no game settings change
    m = Menu(START)
    press(m, OK, OK, OK, OK, CAROM, FOUL)  # yes, then back to no
    press(m, OK)
    assert not m.closed and not m.check and ITEMS[m.item] == "new"
    m.draw(buf)
    assert font_text(buf) == "nEW   no"  # "yes" on the check item does not carry over


def font_text(buf):
    return "".join(decode_segments(b) for b in buf)


def test_shown_is_the_item_the_last_picture_was_drawn_for():
    m = Menu(START)
    assert m.shown is None  # nothing drawn yet
    buf = bytearray(8)
    m.draw(buf)
    press(m, OK)  # the menu is on d2 now, but the glass still shows d1
    assert (ITEMS[m.item], m.shown) == ("d2", "d1")
    assert text(m) == "d2    40" and m.shown == "d2"


FINISHED = {"rules": "ddbu", "distance": (40, 30), "sets": 1, "first": 1, "teams": 0,
            "best_of": 1, "marked": None, "members": None}


def test_after_a_finished_game_again_is_first_and_ok_starts_it():
    from firmware.menu import rematch

    again = rematch(FINISHED)
    assert again == {"rules": "ddbu", "distance": (40, 30), "sets": 1, "first": 2,
                     "teams": 0}  # the other player breaks
    m = Menu(again, again=again)
    assert text(m) == "AGAIn   "
    assert press(m, OK) == again and m.closed
    m = Menu(again, again=again)
    press(m, CAROM)  # carom (or foul) goes on to the settings
    assert ITEMS[m.item] == "d1" and not m.closed
    press(m, UNDO, UNDO)  # back to AGAIn, then out: nothing changes
    assert m.closed and m.sound is None


def test_ceb_rematch_breaks_as_the_sets_alternate():
    from firmware.menu import rematch

    # CEB 11.7: the openings alternate; the next opener did not open the last set, and
    # plays the marked ball in it (RULES.md)
    st = dict(FINISHED, rules="ceb", best_of=3, sets=None, marked=1)
    assert rematch(st)["first"] == 1 and rematch(st)["sets"] == 3
    assert rematch(dict(st, marked=2))["first"] == 2


def test_after_a_finished_game_ok_through_every_item_starts_the_new_game():
    again = {"rules": "ddbu", "distance": (40, 40), "sets": 1, "first": 2, "teams": 0}
    m = Menu(again, again=again)
    press(m, FOUL, OK, OK, OK, OK)  # to the settings: d1, then d2, first, rules, check
    press(m, OK)
    assert ITEMS[m.item] == "new" and text(m) == "nEW  yE5"
    press(m, CAROM)
    assert text(m) == "nEW  yE5"  # no "no" after a finished game: nothing to go back to
    assert press(m, OK) == again and m.closed


def test_the_buzzer_item_only_on_a_board_with_a_buzzer():
    m = Menu(START)
    visited = []
    while not m.closed:
        visited.append(ITEMS[m.item])
        press(m, OK)
    assert visited == ["d1", "d2", "first", "rules", "check", "new"]
    m = Menu(START, sound=True)
    press(m, OK, OK, OK, OK)  # d1, d2, first, rules -> bEEP
    assert text(m) == "bEEP  on"
    press(m, CAROM)
    assert text(m) == "bEEP oFF" and m.sound is False
    press(m, OK, OK)  # check, new: no
    assert press(m, OK) is None and m.closed and m.sound is False  # kept on leaving
