"""The setup menu worked with the four buttons (HARDWARE.md: setting up a game needs no laptop)."""

from firmware.menu import CAROM, FOUL, HOLD, OK, PRESS, UNDO, Menu

START = {"rules": "ddbu", "distance": (40, 40), "sets": 1, "first": 1}


def press(menu, *buttons, kind=PRESS):
    result = None
    for b in buttons:
        result = menu.button(b, kind)
    return result


def test_walk_through_every_item_and_start_a_ceb_match():
    m = Menu(START)
    press(m, CAROM)  # rules: ddbu -> ceb
    assert m.rules == "ceb"
    press(m, OK, CAROM, CAROM)  # d1: 40 -> 60
    press(m, OK, FOUL)  # d2: 40 -> 30
    press(m, OK, CAROM)  # sets 1 -> 3
    press(m, OK, CAROM)  # first 1 -> 2
    press(m, OK, CAROM)  # new game: no -> yes
    settings = press(m, OK)
    assert settings == {"rules": "ceb", "distance": (60, 30), "sets": 3, "first": 2}
    assert m.closed


def test_hold_steps_distance_by_one_press_by_ten():
    m = Menu(START)
    press(m, OK)
    press(m, CAROM, kind=HOLD)
    press(m, CAROM)
    assert m.distance[0] == 51


def test_sets_item_is_skipped_outside_ceb():
    m = Menu(START)
    press(m, OK, OK, OK)  # rules -> d1 -> d2 -> (sets skipped) first
    buf = bytearray(8)
    assert m.item == 4
    m.draw(buf)
    press(m, UNDO)
    assert m.item == 2  # back to d2, again skipping sets


def test_new_game_defaults_to_no_and_undo_from_the_start_leaves():
    m = Menu(START)
    press(m, OK, OK, OK, OK)
    assert press(m, OK) is None and m.closed  # "nEW no": nothing changes
    m = Menu(START)
    assert press(m, UNDO) is None and m.closed


def test_distance_stays_within_bounds():
    m = Menu(START)
    press(m, OK)
    for _ in range(10):
        press(m, FOUL)
    assert m.distance[0] == 2
