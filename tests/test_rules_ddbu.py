"""Keglebillard (rules id ddbu) against seed 000 (DDBU rules 2021-22), seed 001 and
RULES.md section 1. Each test names the section it checks."""

import pytest
from helpers import ALL_PINS, spots

from rules_core import Game, GameError

ALL = ALL_PINS
game = Game


def test_s3_4_each_pin_2_points():
    g = game("ddbu", 40)
    g.shot(pins=spots(2))
    assert g.state()["score"] == [2, 0]
    g.shot(pins=spots(1, 3, 5))
    assert g.state()["score"] == [8, 0]


def test_s3_5_carambole_4_points_and_pins_add_up_to_14():
    g = game("ddbu", 40)
    g.shot(carom=1)
    assert g.state()["score"] == [4, 0]
    g.shot(pins=ALL, carom=1)
    s = g.state()
    assert s["score"] == [18, 0]
    assert s["last"] == {"player": 1, "points": 14, "to": 1, "foul": False}


def test_casino_counts_as_the_carambole_in_ddbu():
    g = game("ddbu", 40)
    g.shot(carom=2)
    assert g.state()["score"] == [4, 0]


def test_s7_1_series_goes_on_while_scoring_and_a_miss_passes_the_turn():
    g = game("ddbu", 40)
    g.shot(pins=spots(1))
    g.shot(pins=spots(2))
    s = g.state()
    assert (s["turn"], s["series"], s["innings"]) == (1, 4, [1, 0])
    g.shot()
    s = g.state()
    assert (s["turn"], s["series"], s["innings"], s["high"]) == (2, 0, [1, 1], [4, 0])


def test_s5_fault_scores_nothing_earlier_series_stands_nothing_to_opponent():
    g = game("ddbu", 40)
    g.shot(pins=spots(1, 2))
    g.shot(pins=spots(3, 4, 5), carom=1, fouls=("foul",))
    s = g.state()
    assert s["score"] == [4, 0]
    assert s["turn"] == 2
    assert s["last"] == {"player": 1, "points": 0, "to": 1, "foul": True}


@pytest.mark.parametrize("code", ["quilles", "rouge", "stop30", "dehors", "touche"])
def test_s5_other_rules_foul_codes_are_ordinary_faults(code):
    g = game("ddbu", 40)
    g.shot(pins=spots(1), fouls=(code,))
    s = g.state()
    assert (s["score"], s["turn"], s["last"]["foul"]) == ([0, 0], 2, True)


def test_s5_12_third_red_in_a_row_without_pin_is_a_fault():
    g = game("ddbu", 40)
    g.shot(carom=1)
    g.shot(carom=1)
    g.shot(carom=1)
    s = g.state()
    assert s["score"] == [8, 0]
    assert s["turn"] == 2
    assert s["last"] == {"player": 1, "points": 0, "to": 1, "foul": True}


def test_seed001_a_pin_every_third_shot_resets_the_count():
    g = game("ddbu", 60)
    g.shot(carom=1)
    g.shot(carom=1)
    g.shot(pins=spots(3), carom=1)  # a pin falls: the count starts again
    g.shot(carom=1)
    g.shot(carom=1)
    s = g.state()
    assert (s["score"], s["turn"]) == ([22, 0], 1)


def test_s5_12_the_count_is_per_series():
    g = game("ddbu", 60)
    g.shot(carom=1)
    g.shot(carom=1)
    g.shot()  # series ends
    g.shot()  # player 2 misses
    g.shot(carom=1)
    s = g.state()
    assert (s["score"], s["turn"]) == ([12, 0], 1)


def test_distance_caps_the_score_and_ends_the_series():
    g = game("ddbu", 10)
    g.shot(pins=ALL, carom=1)
    s = g.state()
    assert s["score"] == [10, 0]
    assert s["last"]["points"] == 10
    assert s["remaining"] == [0, 10]
    assert s["turn"] == 2
    assert s["announce"] == ["distance:1", "last-series:2"]
    assert s["last_series"] == 2


def test_s7_4_second_player_reaching_first_wins_at_once():
    g = game("ddbu", 10)
    g.shot()
    g.shot(pins=ALL)
    s = g.state()
    assert (s["status"], s["winner"], s["turn"]) == ("finished", 2, 2)
    assert s["announce"] == ["distance:2", "finished"]


def test_s7_5_last_series_short_of_distance_starter_wins():
    g = game("ddbu", 10)
    g.shot(pins=ALL)
    g.shot(pins=spots(1, 2))
    assert g.state()["status"] == "playing"
    g.shot()
    s = g.state()
    assert (s["status"], s["winner"], s["score"], s["innings"]) == (
        "finished", 1, [10, 4], [1, 1])
    assert s["last_series"] is None


def test_s7_6_both_reach_distance_tie():
    g = game("ddbu", 10, first=2)
    g.shot(pins=ALL)
    g.shot(pins=ALL)
    s = g.state()
    assert (s["status"], s["winner"]) == ("finished", "tie")


def test_s4_1_handicap_own_distances():
    g = game("ddbu", (20, 30))
    g.shot(pins=ALL, carom=1)
    g.shot(pins=ALL)  # 24, capped at 20
    s = g.state()
    assert s["score"] == [20, 0]
    assert s["remaining"] == [0, 30]
    g.shot(pins=ALL, carom=1)
    g.shot(pins=ALL, carom=1)
    assert g.state()["score"] == [20, 28]
    g.shot(pins=spots(1, 2))
    s = g.state()
    assert (s["score"], s["winner"]) == ([20, 30], "tie")


def test_s4_1_break_after_the_series_that_reached_half():
    g = game("ddbu", 40)
    g.shot(pins=ALL, carom=1)
    g.shot(pins=spots(1, 2, 3))  # 20: half, but no break in the middle of a series (4.2)
    assert g.state()["status"] == "playing"
    assert "break" not in g.state()["announce"]
    g.shot()
    s = g.state()
    assert s["status"] == "break"
    assert s["announce"] == ["break"]
    assert s["turn"] == 2
    g.shot(pins=spots(1))
    s = g.state()
    assert (s["status"], s["announce"]) == ("playing", [])


def test_s4_1_break_only_once_per_game():
    g = game("ddbu", 20)
    g.shot(pins=ALL)
    g.shot()  # break
    g.shot(pins=ALL)
    g.shot()
    s = g.state()
    assert (s["status"], s["announce"], s["score"]) == ("playing", [], [10, 10])


def test_s4_1_break_uses_the_players_own_distance():
    g = game("ddbu", (40, 20))
    g.shot(pins=ALL)  # player 1: 10 of 40, not half
    g.shot()
    assert g.state()["status"] == "playing"
    g.shot(pins=ALL)  # player 2: 10 of 20, half
    g.shot()
    assert g.state()["status"] == "break"


def test_ruling_no_break_when_the_series_reached_the_full_distance():
    g = game("ddbu", 20)
    g.shot(pins=ALL)
    g.shot(pins=ALL)
    s = g.state()
    assert s["status"] == "playing"
    assert "break" not in s["announce"]


def test_s13_3_twenty_remaining_once_then_distance():
    g = game("ddbu", 40)
    g.shot(pins=ALL, carom=1)  # 14: 26 left
    assert g.state()["announce"] == []
    g.shot(pins=ALL)  # 24: 16 left
    assert g.state()["announce"] == ["20-remaining:1"]
    g.shot(pins=spots(1))  # 26: 14 left
    assert g.state()["announce"] == []
    g.shot(pins=ALL, carom=1)  # 40
    assert g.state()["announce"] == ["distance:1", "last-series:2"]


def test_s13_3_jump_straight_to_distance_announces_only_the_distance():
    g = game("ddbu", 24)
    g.shot(pins=ALL)  # 10: 14 left -> 20-remaining
    g.shot()
    g.shot(pins=ALL, carom=1)  # player 2: 14, 10 left -> 20-remaining:2
    g.shot()
    g.shot(pins=ALL, carom=1)  # player 1: 24 -> distance
    assert g.state()["announce"][0] == "distance:1"
    g2 = game("ddbu", 14)
    g2.shot(pins=ALL, carom=1)  # from 14 left straight to 0
    assert g2.state()["announce"] == ["distance:1", "last-series:2"]


def test_sets_other_than_one_rejected():
    with pytest.raises(GameError):
        game("ddbu", 40, sets=3)
