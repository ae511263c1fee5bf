"""The records (tools.records) over a database the real logger wrote: names at the table, the live
tables, results, one game's shots and series, and the players' statistics by name."""

import datetime
import json
import sqlite3

import pytest
from club_games import logged_club

from rules_core import Game
from tools.logger.store import Store
from tools.records import RecordError, Records
from tools.testing.sample import state_fields

BOARDS = [
    ("c1ab0001", [("ddbu", (30, 30), 1, 11), ("ceb", (30, 30), 3, 12)]),
    ("c1ab0002", [("russian", (40, 40), 1, 13), ("ddbu", (40, 40), 1, 14, False)]),
    ("c1ab0003", [("ddbu", (50, 40), 1, 15), ("ceb", (40, 40), 1, 16),
                  ("russian", (30, 30), 1, 17)]),
]


@pytest.fixture(scope="module")
def logged(tmp_path_factory):
    path = tmp_path_factory.mktemp("club") / "games.db"
    played = logged_club(path, BOARDS)
    return str(path), played


@pytest.fixture
def club(logged, tmp_path):
    """A fresh copy of the logged database per test (names set by one test stay there)."""
    copy = tmp_path / "games.db"
    source = sqlite3.connect(logged[0])
    target = sqlite3.connect(copy)
    source.backup(target)
    source.close()
    target.close()
    store = Records.open(str(copy))
    yield store, logged[1]
    store.close()


def key_of(store, board, number):
    return store.con.execute(
        "SELECT g.id FROM games g JOIN boards b ON b.id = g.board "
        "WHERE b.key=? AND g.game_no=?", (board, number)).fetchone()[0]


def test_current_games_are_each_boards_latest_with_the_state_as_stored(club):
    store, played = club
    current = store.current_games()
    assert [c.board for c in current] == ["c1ab0001", "c1ab0002", "c1ab0003"]
    for entry in current:
        number = max(n for key, n in played if key == entry.board)
        assert entry.game == key_of(store, entry.board, number)
        assert entry.game_no == number
        assert json.loads(entry.final_text) == state_fields(played[(entry.board, number)])[
            "state"]
        assert entry.names == [None, None]
    unfinished = [c for c in current if c.board == "c1ab0002"][0]
    assert json.loads(unfinished.final_text)["status"] != "finished"


def test_names_set_for_the_current_game_and_an_earlier_one_and_corrected(club):
    store, _ = club
    now = key_of(store, "c1ab0002", 2)
    before = key_of(store, "c1ab0002", 1)
    assert store.set_names(now, ["Anna", "Ben"]) == ["Anna", "Ben"]
    assert store.set_names(before, ["  Carla   Maria ", "anna"]) == ["Carla Maria", "Anna"]
    current = {c.board: c for c in store.current_games()}
    assert current["c1ab0002"].names == ["Anna", "Ben"]
    assert store.players() == ["Anna", "Ben", "Carla Maria"]  # anna is Anna: one player
    # a slot corrected, the other left alone (None), then one cleared ("")
    assert store.set_names(now, ["Dieter", None]) == ["Dieter", "Ben"]
    assert store.set_names(now, [None, ""]) == ["Dieter", None]
    log = store.con.execute("SELECT game, slot, before, after FROM club_name_log "
                           "WHERE game=? ORDER BY id", (now,)).fetchall()
    assert log == [(now, 1, None, "Anna"), (now, 2, None, "Ben"), (now, 1, "Anna", "Dieter"),
                   (now, 2, "Ben", None)]
    # a misspelt name corrected everywhere; to a known name: the two become one
    store.rename_player("Carla Maria", "Carla")
    assert store.names(before) == ["Carla", "Anna"]
    store.rename_player("Dieter", "anna")
    assert store.names(now) == ["Anna", None]
    assert "Dieter" not in store.players()


@pytest.mark.parametrize("names, says", [
    (["x" * 41, "Ben"], "at most 40"), (["Anna\x1b[2J", "Ben"], "control"),
    (["Anna"], "two names"), ([3, "Ben"], "text"), (["=HYPERLINK(1)", "Ben"], "begin with")])
def test_a_bad_name_is_refused_and_nothing_changes(club, names, says):
    store, _ = club
    game = key_of(store, "c1ab0001", 1)
    store.set_names(game, ["Anna", "Ben"])
    with pytest.raises(RecordError, match=says):
        store.set_names(game, names)
    assert store.names(game) == ["Anna", "Ben"]
    assert store.players() == ["Anna", "Ben"]


def test_naming_a_game_that_is_not_there_is_refused(club):
    store, _ = club
    with pytest.raises(RecordError, match="no game 999"):
        store.set_names(999, ["Anna", "Ben"])
    assert store.players() == []


def test_games_of_a_day_a_table_and_a_player(club):
    store, played = club
    every = store.games()
    assert len(every) == len(played)
    assert [g.game for g in every] == sorted((g.game for g in every), reverse=True)
    today = datetime.date.today()
    assert len(store.games(day=today.isoformat())) == len(played)
    assert store.games(day=(today - datetime.timedelta(days=1)).isoformat()) == []
    with pytest.raises(RecordError, match="YYYY-MM-DD"):
        store.games(day="30.11.2026")
    table = store.games(table="c1ab0003")
    assert [g.game_no for g in table] == [3, 2, 1]
    assert {g.board for g in table} == {"c1ab0003"}
    store.set_names(key_of(store, "c1ab0003", 2), ["Anna", "Ben"])
    store.set_names(key_of(store, "c1ab0001", 1), ["Carla", "Anna"])
    assert [(g.board, g.game_no) for g in store.games(player="anna")] == [
        ("c1ab0003", 2), ("c1ab0001", 1)]
    assert [g.names for g in store.games(player="Carla")] == [["Carla", "Anna"]]
    assert store.games(player="Nobody") == []
    assert store.days() == [(today.isoformat(), len(played))]
    assert store.tables() == [("c1ab0001", 2), ("c1ab0002", 2), ("c1ab0003", 3)]


def stored_scores(store, game):
    """{shots: score} from the board states the logger stored for the game."""
    rows = store.con.execute("SELECT state FROM states WHERE game=? AND stale=0 ORDER BY rank",
                            (game,)).fetchall()
    out = {}
    for (text,) in rows:
        state = json.loads(text)
        out[state["shots"]] = tuple(state["score"])
    return out


@pytest.mark.parametrize("board, number", [
    ("c1ab0001", 1), ("c1ab0001", 2), ("c1ab0002", 1), ("c1ab0002", 2), ("c1ab0003", 2)])
def test_a_games_shots_series_and_scores_agree_with_what_the_board_sent(club, board, number):
    store, played = club
    key = key_of(store, board, number)
    game = store.game(key)
    board_game = played[(board, number)]
    final = board_game.state()
    assert game.replayed and game.complete
    assert {k: game.final[k] for k in ("score", "innings", "high", "sets")} == {
        k: final[k] for k in ("score", "innings", "high", "sets")}
    # the shot list is the export's (tools.logger export gives the same)
    (exported,) = map(json.loads, store.export_lines(key))
    assert [(s["number"], s["player"], s["points"], s["to"]) for s in game.shots] == [
        (s["number"], s["player"], s["points"], s["to"]) for s in exported["shots"]]
    # every point of the chart is a score the board itself sent after that shot
    sent = stored_scores(store, key)
    assert game.scores[0] == (0, 0, 0)
    assert [n for n, _, _ in game.scores] == list(range(final["shots"] + 1))
    for n, s1, s2 in game.scores:
        assert sent[n] == (s1, s2)
    # the series: each a player's points in one inning; the highest is the board's high
    series = game.series
    for slot in (1, 2):
        mine = [s for s in series if s["player"] == slot]
        assert max([s["points"] for s in mine] or [0]) == final["high"][slot - 1]
        if final["rules"] != "ceb":
            # the innings the board counts: one series each (the player to shoot next has
            # begun one more in an unfinished game)
            begun = final["innings"][slot - 1]
            assert len(mine) in (begun, begun - 1)
        if final["rules"] == "ddbu":
            assert sum(s["points"] for s in mine) == final["score"][slot - 1]
    # series follow one another: alternating players, shots numbered without a gap
    assert [s["first"] for s in series][0] == 1
    for a, b in zip(series, series[1:], strict=False):
        assert b["first"] == a["last"] + 1
        assert b["player"] != a["player"] or b["set"] != a["set"]


def test_a_game_that_is_not_there(club):
    store, _ = club
    assert store.game(999) is None


def played_totals(game, slot):
    """(points, innings, high) of a board slot, from a game as the board played it: the
    points credited to the player and the innings begun, over every set."""
    state = game.state()
    replay = Game(state["rules"], tuple(state["distance"]), state["best_of"], state["first"])
    points = innings = 0
    shooter = None
    for at in range(0, len(game.history), 4):
        before = replay.shots
        replay.apply(game.history[at:at + 4])
        last = replay.state()["last"]
        points += last["points"] if last["to"] == slot else 0
        # a new inning: the other player shot before (ceb: every shot is one)
        new = shooter != last["player"] or state["rules"] == "ceb"
        innings += last["player"] == slot and new and replay.shots != before
        shooter = last["player"]
    return points, innings, state["high"][slot - 1]


def expected_stats(played, store, named):
    """Per (name, rules) computed from the games as the boards played them."""
    table = {}
    for (board, number), game in played.items():
        key = key_of(store, board, number)
        if key not in named or not game.finished:
            continue
        state = game.state()
        for slot, name in enumerate(named[key], 1):
            e = table.setdefault((name, state["rules"]), [0, 0, 0, 0, 0])
            e[0] += 1
            e[1] += state["winner"] == slot
            points, innings, high = played_totals(game, slot)
            e[2] += points
            e[3] += innings
            e[4] = max(e[4], high)
    return table


def test_the_loggers_stats_count_a_match_of_sets_whole(club):
    # `tools.logger stats` (a board's player 1 and 2) and the Players page add up one
    # computation: a ceb match's points and innings over every set, not its last set's
    store, played = club
    got = store.slot_stats()
    for slot in (1, 2):
        games = [g for (board, _), g in played.items() if board == "c1ab0001"]
        assert {g.rules for g in games} == {"ddbu", "ceb"}
        want = [played_totals(g, slot) for g in games]
        entry = got[("c1ab0001", slot)]
        assert (entry["games"], entry["points"], entry["series"], entry["high"]) == (
            len(games), sum(w[0] for w in want), sum(w[1] for w in want),
            max(w[2] for w in want))
        assert entry["won"] == sum(g.state()["winner"] == slot for g in games)


def test_player_stats_by_name_best_first(club):
    store, played = club
    named = {key_of(store, "c1ab0001", 1): ["Anna", "Ben"],
             key_of(store, "c1ab0001", 2): ["Ben", "Anna"],
             key_of(store, "c1ab0002", 1): ["Carla", "Anna"],
             key_of(store, "c1ab0002", 2): ["Anna", "Carla"],  # unfinished: not counted
             key_of(store, "c1ab0003", 1): ["Ben", "Carla"],
             key_of(store, "c1ab0003", 2): ["Carla", "Ben"]}
    for key, names in named.items():
        store.set_names(key, names)
    # c1ab0003's third game has no names: it counts for nobody
    stats = store.player_stats()
    want = expected_stats(played, store, named)
    got = {(e["name"], e["rules"]): [e["games"], e["won"], e["points"], e["innings"],
                                     e["high"]] for e in stats}
    assert got == want
    for e in stats:
        assert e["average"] == round(e["points"] / e["innings"], 3)
    # best first within a rules id: by average
    for rules in ("ceb", "ddbu", "russian"):
        averages = [e["average"] for e in stats if e["rules"] == rules]
        assert averages == sorted(averages, reverse=True)
    assert [e["rules"] for e in stats] == sorted(e["rules"] for e in stats)


def test_an_older_logger_still_reads_the_database_with_names(club):
    store, _ = club
    store.set_names(1, ["Anna", "Ben"])
    old = Store(store.path, create=False)  # checks the logger's id and version
    assert old.final(1) is not None
    old.close()


def test_a_fresh_logger_database_gains_the_name_tables(tmp_path):
    path = str(tmp_path / "new.db")
    Store(path).close()
    store = Records.open(path)
    assert store.current_games() == [] and store.players() == []
    assert store.player_stats() == [] and store.games() == []
    store.close()


def test_stats_kept_per_game_are_worked_out_again_after_a_later_state(club):
    store, _ = club
    key = key_of(store, "c1ab0001", 1)
    store.set_names(key, ["Anna", "Ben"])
    first = store.player_stats()
    kept = store.con.execute("SELECT game, points1, points2 FROM club_game_totals").fetchall()
    assert [g for g, _, _ in kept] == [key]
    assert store.player_stats() == first  # from what was kept: the same
    # what was kept no longer fits the game's final state: it is not used
    store.database.writer.execute("UPDATE club_game_totals SET final_rank = final_rank - 1, "
                                  "points1 = 999")
    assert store.player_stats() == first
    assert store.con.execute("SELECT points1 FROM club_game_totals").fetchone()[0] != 999


def test_names_fold_case_and_unicode_the_same_everywhere(club):
    store, _ = club
    first, second, third = (key_of(store, "c1ab0001", 1), key_of(store, "c1ab0003", 1),
                            key_of(store, "c1ab0003", 3))
    assert store.set_names(first, ["Иван", "Ben"]) == ["Иван", "Ben"]
    # the same people as other hands and keyboards write them: one player each
    assert store.set_names(second, ["иван", "Josée"]) == ["Иван", "Josée"]
    assert store.set_names(third, ["JOSE\u0301E", "STRASSE"]) == ["Josée", "STRASSE"]
    assert store.names(third)[0] == "Jos\u00e9e"  # kept as NFC: é is one code point
    assert store.players() == ["Ben", "Josée", "STRASSE", "Иван"]
    assert [g.game for g in store.games(player="ИВАН")] == sorted([first, second],
                                                                      reverse=True)
    assert [g.game for g in store.games(player="straße")] == [third]
    assert [g.game for g in store.games(player="jose\u0301e")] == sorted(
        [second, third], reverse=True)
    names = {e["name"] for e in store.player_stats()}
    assert "иван" not in names and "ИВАН" not in names
    store.rename_player("иВАН", "Ivan")  # found by any spelling of it
    assert store.names(first) == ["Ivan", "Ben"]


def test_the_same_player_on_both_sides_of_a_game_is_refused(club):
    store, _ = club
    game = key_of(store, "c1ab0001", 1)
    for pair in (["Иван", "иван"], ["Anna", "ANNA"], ["Jos\u00e9e", "JOSE\u0301E"]):
        with pytest.raises(RecordError, match="both sides"):
            store.set_names(game, pair)
    assert store.names(game) == [None, None] and store.players() == []
    store.set_names(game, ["Anna", "Ben"])
    with pytest.raises(RecordError, match="both sides"):
        store.set_names(game, [None, "anna"])  # the other slot is kept: Anna twice
    assert store.names(game) == ["Anna", "Ben"]
    # two players who met cannot be merged into one by a rename
    with pytest.raises(RecordError, match="played each other"):
        store.rename_player("Ben", "anna")
    assert store.names(game) == ["Anna", "Ben"]


def test_an_older_databases_players_are_folded_into_one(tmp_path, logged):
    # the club app before name_key: Иван and иван were two rows (NOCASE is ASCII only)
    path = tmp_path / "old.db"
    source, target = sqlite3.connect(logged[0]), sqlite3.connect(path)
    source.backup(target)
    source.close()
    target.executescript(
        "CREATE TABLE club_players (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE "
        "COLLATE NOCASE, created REAL);"
        "CREATE TABLE club_seats (game INTEGER NOT NULL, slot INTEGER NOT NULL, player "
        "INTEGER NOT NULL, named REAL, PRIMARY KEY (game, slot));"
        "INSERT INTO club_players (name) VALUES ('Иван'), ('Ben'), ('иван');"
        "INSERT INTO club_seats VALUES (1, 1, 1, 0), (1, 2, 2, 0), (3, 1, 3, 0);")
    target.commit()
    reading = Records.reading(str(path))  # `tools.logger export`
    assert reading.players() == ["Ben", "Иван"]
    assert [g.game for g in reading.games(player="ИВАН")] == [3, 1]
    reading.close()
    store = Records.open(str(path))
    assert store.con.execute("SELECT id, name FROM club_players ORDER BY id").fetchall() == [
        (1, "Иван"), (2, "Ben")]
    assert store.names(3) == ["Иван", None]
    store.close()
