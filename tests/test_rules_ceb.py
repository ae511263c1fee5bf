"""Five-pins (rules id ceb) against seed 002 (CEB rules, Danish) and RULES.md section 2.
Each test names the paragraph it checks."""

import pytest
from helpers import ALL_PINS, spots

from rules_core import Game, GameError

ALL = ALL_PINS
game = Game


def opened(distance=60, sets=1, first=1):
    """A game past its opening shot (a miss), player (3 - first) to play."""
    g = game("ceb", distance, sets, first)
    g.shot()
    return g


@pytest.mark.parametrize("pins,points", [
    (spots(1), 2), (spots(2, 4), 4), (spots(1, 2, 4, 5), 8),  # 8.1a white pins 2
    (spots(3, 1), 6), (ALL, 12),                              # 8.1b red pin 4
    (spots(3), 10),                                            # 8.1c red alone 10
])
def test_s8_1_pin_values(pins, points):
    g = opened()
    g.shot(pins=pins)
    assert g.state()["score"] == [0, points]


@pytest.mark.parametrize("carom,pins,points", [
    (1, 0, 4), (2, 0, 3),                # 8.2 carambole 4, casino 3
    (1, spots(3), 14), (2, ALL, 15),      # 8.3 pins and carambole add up
])
def test_s8_2_s8_3_carambole_casino_and_sum(carom, pins, points):
    g = opened()
    g.shot(pins=pins, carom=carom)
    assert g.state()["score"] == [0, points]


def test_s7_2_players_alternate_one_shot_each_even_when_scoring():
    g = opened()
    s = g.state()
    assert (s["turn"], s["innings"]) == (2, [1, 1])
    g.shot(pins=spots(1))
    s = g.state()
    assert (s["turn"], s["innings"], s["series"]) == (1, [2, 1], 0)


def test_s7_5_only_the_other_white_scores_nothing():
    g = opened()
    g.shot()
    s = g.state()
    assert s["score"] == [0, 0]
    assert s["last"] == {"player": 2, "points": 0, "to": 2, "foul": False}


def test_s11_4_opening_shot_points_go_to_the_opponent_without_foul():
    g = game("ceb", 60)
    g.shot(pins=spots(1, 2), carom=1)
    s = g.state()
    assert s["score"] == [0, 8]
    assert s["last"] == {"player": 1, "points": 8, "to": 2, "foul": False}
    assert s["high"] == [0, 0]


def test_s24_1_foul_gives_2_plus_all_the_shot_points_to_the_opponent():
    g = opened()
    g.shot(pins=spots(3, 4), carom=1, fouls=("foul",))
    s = g.state()
    assert s["score"] == [2 + 6 + 4, 0]
    assert s["last"] == {"player": 2, "points": 12, "to": 1, "foul": True}
    assert s["turn"] == 1


def test_s24_3_rouge_2_points_plus_shot():
    g = opened()
    g.shot(pins=spots(1), fouls=("rouge",))
    assert g.state()["score"] == [4, 0]


def test_s24_2_quilles_only_pin_and_carom_points():
    g = opened()
    g.shot(pins=spots(2, 3), carom=2, fouls=("quilles",))
    assert g.state()["score"] == [2 + 4 + 3, 0]
    g.shot(fouls=("quilles",))
    assert g.state()["score"] == [9, 0]


def test_s24_1_several_fouls_add_their_penalties():
    g = opened()
    g.shot(fouls=("rouge", "dehors", "touche"))
    assert g.state()["score"] == [6, 0]
    g.shot(pins=spots(5), fouls=("quilles", "rouge"))
    assert g.state()["score"] == [6, 4]


def test_s24_1_the_same_foul_twice_counts_twice():
    g = opened()
    g.shot(fouls=("foul", "foul"))
    assert g.state()["score"] == [4, 0]


def test_stop30_in_ceb_is_an_ordinary_foul():
    g = opened()
    g.shot(fouls=("stop30",))
    assert g.state()["score"] == [2, 0]


def test_s7_1_score_capped_at_distance_and_set_over():
    g = opened(distance=10)
    g.shot(pins=ALL, carom=1)  # 16 made, capped
    s = g.state()
    assert s["sets"] == [0, 1]
    assert s["status"] == "finished"
    assert s["score"] == [0, 10]
    assert s["last"]["points"] == 10
    assert s["announce"] == ["distance:2", "set:2", "finished"]


def test_s13_3_new_set_resets_score_and_innings_alternates_opening():
    g = opened(distance=10, sets=3)  # player 1 opened set 1
    g.shot(pins=spots(3))  # player 2 wins set 1
    s = g.state()
    assert s["sets"] == [0, 1]
    assert s["score"] == [0, 0]
    assert s["status"] == "playing"
    assert s["announce"] == ["distance:2", "set:2"]
    assert (s["turn"], s["innings"], s["shots"], s["high"]) == (2, [0, 1], 2, [0, 10])
    g.shot(pins=spots(1))  # set 2 opening by player 2: points to player 1
    assert g.state()["score"] == [2, 0]


def test_s13_1_opponent_fouls_can_win_the_set():
    g = opened(distance=4)
    g.shot(fouls=("rouge", "dehors"))
    s = g.state()
    assert (s["winner"], s["sets"], s["score"]) == (1, [1, 0], [4, 0])


def win_set(g, player):
    """Player wins the current set of a distance-10 ceb game with the red pin alone."""
    if g.state()["shots"] == 0 or g.opening:
        g.shot()  # the opening: a miss
    if g.state()["turn"] != player:
        g.shot()
    g.shot(pins=spots(3))


@pytest.mark.parametrize("best_of,order,set_points,match_points", [
    (3, [1, 1], [3, 0], [1, 0]),           # 13.4a 2:0
    (3, [2, 1, 2], [1, 2], [0, 1]),        # 13.4b 2:1
    (5, [2, 2, 2], [0, 5], [0, 1]),        # 13.5a 3:0
    (5, [1, 2, 1, 1], [4, 1], [1, 0]),     # 13.5b 3:1
    (5, [2, 1, 1, 2, 2], [2, 3], [0, 1]),  # 13.5c 3:2
])
def test_s13_4_s13_5_set_and_match_points(best_of, order, set_points, match_points):
    g = game("ceb", 10, best_of)
    for player in order:
        assert g.state()["set_points"] is None
        win_set(g, player)
    s = g.state()
    assert s["status"] == "finished"
    assert (s["set_points"], s["match_points"]) == (set_points, match_points)


def test_best_of_1_has_no_set_points():
    g = game("ceb", 10)
    win_set(g, 2)
    s = g.state()
    assert (s["winner"], s["set_points"], s["match_points"]) == (2, None, None)


def breaks_seen(best_of, order):
    g = game("ceb", 10, best_of)
    seen = []
    for player in order:
        win_set(g, player)
        s = g.state()
        if s["status"] == "break":
            assert "break" in s["announce"]
            seen.append(tuple(s["sets"]))
    return seen


@pytest.mark.parametrize("best_of,order,expected", [
    (3, [1, 2, 1], [(1, 1)]),                  # 1.4 best of 3: only at 1-1
    (5, [1, 1, 2, 1], [(2, 0)]),               # best of 5: 2-0, once
    (5, [1, 2, 2, 1, 1], [(1, 2)]),            # 2-1 (player 2 leading)
    (5, [1, 2, 1, 2, 2], [(2, 1)]),            # not at 1-0, 1-1, 2-2
    (1, [1], []),
])
def test_s1_4_break_only_at_allowed_set_scores_once(best_of, order, expected):
    assert breaks_seen(best_of, order) == expected


def test_s11_7_openings_alternate_with_first_player_2():
    g = game("ceb", 10, 5, first=2)
    assert g.state()["turn"] == 2
    win_set(g, 1)
    assert g.state()["turn"] == 1  # player 1 opens set 2
    win_set(g, 1)
    assert g.state()["turn"] == 2  # player 2 opens set 3


def test_twenty_remaining_per_set():
    g = opened(distance=30, sets=3)
    g.shot(pins=spots(3))
    assert g.state()["announce"] == ["20-remaining:2"]
    g.shot()
    g.shot(pins=ALL, carom=1)  # 26
    g.shot()
    g.shot(pins=ALL)  # 38 capped: set 1 to player 2
    g.shot()  # opening of set 2 by player 2
    g.shot()
    g.shot(pins=spots(3))  # player 2: 10 again in the new set
    assert g.state()["announce"] == ["20-remaining:2"]


def test_sets_must_be_1_3_or_5():
    with pytest.raises(GameError):
        game("ceb", 10, 2)
