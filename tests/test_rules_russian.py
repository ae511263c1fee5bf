"""Russian kegel billiards (rules id russian) against seed 004 and RULES.md section 3."""

import pytest
from helpers import ALL_PINS, spots

from rules_core import Game

ALL = ALL_PINS
game = Game


@pytest.mark.parametrize("pins,points", [
    (spots(1), 2), (spots(2, 5), 4), (spots(1, 2, 4, 5), 8),  # outer pins 2 each
    (spots(3), 5), (spots(3, 4), 5),                          # king alone / + one: 5
    (spots(1, 3, 5), 7),                                      # king + two: 7
    (spots(1, 2, 3, 4), 9),                                   # king + three: 9
    (ALL, 30),                                                # all five: 30
])
def test_seed004_pin_values(pins, points):
    g = game("russian", 100)
    g.shot(pins=pins)
    s = g.state()
    assert s["score"] == [points, 0]
    assert s["turn"] == 1  # pins scored: the player goes on


def test_seed004_lone_carambole_3_points_and_the_turn_passes():
    g = game("russian", 100)
    g.shot(carom=1)
    s = g.state()
    assert (s["score"], s["turn"], s["innings"]) == ([3, 0], 2, [1, 1])
    assert s["last"] == {"player": 1, "points": 3, "to": 1, "foul": False}


def test_ruling_carambole_with_pins_adds_nothing():
    g = game("russian", 100)
    g.shot(pins=spots(3, 1), carom=1)
    s = g.state()
    assert (s["score"], s["turn"]) == ([5, 0], 1)


def test_a_shot_that_scores_nothing_passes_the_turn():
    g = game("russian", 100)
    g.shot(pins=spots(1))
    g.shot()
    s = g.state()
    assert (s["turn"], s["high"], s["series"]) == (2, [2, 0], 0)


def test_seed004_penalty_every_point_to_the_opponent_turn_passes():
    g = game("russian", 100)
    g.shot(pins=spots(2, 3, 4), fouls=("foul",))
    s = g.state()
    assert (s["score"], s["turn"]) == ([0, 7], 2)
    assert s["last"] == {"player": 1, "points": 7, "to": 2, "foul": True}


def test_seed004_missing_every_ball_is_a_foul_for_0():
    g = game("russian", 100)
    g.shot(fouls=("foul",))
    s = g.state()
    assert (s["score"], s["turn"], s["last"]["foul"]) == ([0, 0], 2, True)


@pytest.mark.parametrize("code", ["quilles", "rouge", "dehors"])
def test_other_rules_codes_are_ordinary_penalties(code):
    g = game("russian", 100)
    g.shot(pins=spots(1), fouls=(code,))
    assert g.state()["score"] == [0, 2]


def test_seed004_stopping_own_ball_gives_opponent_30_plus_points():
    g = game("russian", 100)
    g.shot(pins=spots(3), fouls=("stop30",))
    s = g.state()
    assert (s["score"], s["turn"]) == ([0, 35], 2)


def test_seed004_opponent_stopping_the_ball_entered_as_adjust_shooter_keeps_turn():
    g = game("russian", 100)
    g.shot(pins=spots(1))
    g.adjust(1, 30)
    s = g.state()
    assert (s["score"], s["turn"]) == ([32, 0], 1)


def test_seed004_game_won_by_own_pins_reaching_the_number_no_cap():
    g = game("russian", 40)
    g.shot(pins=ALL)
    g.shot(pins=spots(1, 2, 3, 4))  # 39
    assert g.state()["status"] == "playing"
    g.shot(pins=spots(3))  # 44: no cap
    s = g.state()
    assert (s["status"], s["winner"], s["score"], s["remaining"]) == (
        "finished", 1, [44, 0], [0, 40])


def test_ruling_lone_carambole_does_not_end_the_game():
    g = game("russian", 5)
    g.shot(pins=spots(1))  # 2
    g.shot(carom=1)  # 5: at the distance, but a lone carambole
    s = g.state()
    assert (s["status"], s["score"], s["turn"]) == ("playing", [5, 0], 2)
    assert s["announce"] == ["distance:1"]
    g.shot(carom=1)  # player 2: lone carambole
    g.shot(pins=spots(1))  # player 1 at 7 with a pin: ends
    s = g.state()
    assert (s["status"], s["winner"], s["score"]) == ("finished", 1, [7, 3])


def test_seed004_game_can_be_ended_by_the_opponents_penalty():
    g = game("russian", 10)
    g.shot(pins=spots(1, 2, 4, 5))  # 8
    g.shot()
    g.shot(pins=spots(1), fouls=("foul",))  # player 2: 2 to player 1 -> 10
    s = g.state()
    assert (s["status"], s["winner"], s["score"]) == ("finished", 1, [10, 0])
    assert s["turn"] == 2


def test_a_miss_penalty_worth_nothing_does_not_end_the_game():
    g = game("russian", 5)
    g.shot(carom=1)
    g.shot(carom=1)
    g.shot(carom=1)  # player 1: 6, past 5 by caramboles only
    g.shot(fouls=("foul",))  # player 2 misses: 0 points to player 1
    assert g.state()["status"] == "playing"
