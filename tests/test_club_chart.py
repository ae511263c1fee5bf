"""The game's chart: an SVG picture whose lines are exactly the scores the board sent."""

import json
import xml.etree.ElementTree as ET

import pytest
from club_games import logged_club

from tools.club.chart import score_chart
from tools.records import Records

SVG = "{http://www.w3.org/2000/svg}"


def vertices(svg, player):
    """The (shot, score) of every vertex of the player's line, read back from the SVG."""
    root = ET.fromstring(svg)
    x0, y0, dx, dy = (float(root.get("data-" + k)) for k in ("x0", "y0", "dx", "dy"))
    (line,) = [e for e in root.iter(SVG + "polyline") if e.get("data-player") == str(player)]
    out = []
    for pair in line.get("points").split():
        x, y = (float(v) for v in pair.split(","))
        shot, score = (x - x0) / dx, (y0 - y) / dy
        assert abs(shot - round(shot)) < 0.01 and abs(score - round(score)) < 0.01
        out.append((round(shot), round(score)))
    return out


@pytest.fixture(scope="module")
def logged(tmp_path_factory):
    path = tmp_path_factory.mktemp("chart") / "games.db"
    logged_club(path, [("c1ab0001", [("ceb", (30, 30), 3, 21), ("ddbu", (40, 30), 1, 22)])])
    store = Records.open(str(path))
    yield store
    store.close()


@pytest.mark.parametrize("key", [1, 2])
def test_the_lines_are_the_scores_the_board_sent_after_each_shot(logged, key):
    game = logged.game(key)
    sent = {}
    for (text,) in logged.con.execute("SELECT state FROM states WHERE game=? AND stale=0 "
                                      "ORDER BY rank", (key,)):
        state = json.loads(text)
        sent[state["shots"]] = state["score"]
    new_sets = [s["number"] for a, s in zip(game.shots, game.shots[1:], strict=False)
                if s["set"] != a["set"]]
    svg = score_chart(game.scores, ["Anna", "Ben"], game.final["distance"], new_sets)
    assert len(sent) == game.final["shots"] + 1
    for player in (1, 2):
        assert vertices(svg, player) == [(n, sent[n][player - 1]) for n in sorted(sent)]
    root = ET.fromstring(svg)
    legend = [t.text for t in root.iter(SVG + "text") if t.get("data-player")]
    assert legend == ["Anna", "Ben"]
    assert len([e for e in root.iter(SVG + "line") if e.get("class") == "new-set"]) == len(
        new_sets)
    if game.final["rules"] == "ceb":
        assert new_sets  # a match of sets: the score starts again, and the chart says where


def test_a_name_is_text_in_the_picture_never_markup():
    name = '<script>alert(1)</script>"&'
    svg = score_chart([(0, 0, 0), (1, 4, 0)], [name, None])
    root = ET.fromstring(svg)
    assert not list(root.iter(SVG + "script")) and "<script>" not in svg
    legend = [t.text for t in root.iter(SVG + "text") if t.get("data-player")]
    assert legend == [name, "Player 2"]


def test_a_game_without_shots_is_an_empty_chart_with_axes():
    svg = score_chart([(0, 0, 0)], ["Anna", "Ben"], [40, 40])
    assert vertices(svg, 1) == [(0, 0)] and vertices(svg, 2) == [(0, 0)]
    root = ET.fromstring(svg)
    assert [e.get("data-player") for e in root.iter(SVG + "line")
            if e.get("class") == "distance"] == ["1", "2"]
