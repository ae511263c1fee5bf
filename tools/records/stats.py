"""Statistics: each game's totals per board slot, worked out one way, summed per player.

    totals(final, shots)              # [(points, innings, high) of slot 1, of slot 2]
    slot_stats(con)                   # {(board, slot): games, won, points, innings, ...}
    player_stats(db, keep=True)       # per name and rules id, best first

What counts (docs/club.md): the points credited to the player, the innings begun and the
high series, as the board counts them. Where the rules play sets (rules_core.settings,
SETS) the final state holds only the last set's score and innings, so points and innings
are added up from the replayed shots (every shot credits its points; a player's series is
one inning). The average is points per inning. `player_stats` keeps each finished game's
totals in the file (club_game_totals, with the rank of the final state they belong to),
so the Players page replays a game once, not at every visit.
"""

import json
import sqlite3

from rules_core.settings import SETS, has
from tools.records.game import history, list_games
from tools.records.names import name_key, named
from tools.records.replay import Replay


def totals(final, shots, series=()):
    """Per board slot (points, innings, high series) of a game: from its final state and,
    where the rules play sets, its replayed shots and series (Replay)."""
    out = []
    for slot in (1, 2):
        if has(final["rules"], SETS):
            points = sum(s["points"] for s in shots if s["to"] == slot)
            innings = sum(1 for s in series if s["player"] == slot)
        else:
            points = final["score"][slot - 1]
            innings = final["innings"][slot - 1]
        out.append((points, innings, final["high"][slot - 1]))
    return out


def _game_totals(con, game, final, packed):
    replay = Replay()
    if has(final["rules"], SETS):  # the score is the last set's: add up the shots
        replay = Replay.of(packed, history(con, game))
    return totals(final, replay.shots, replay.series)


def _average(entry, innings):
    entry["average"] = round(entry["points"] / entry[innings], 3) if entry[innings] else 0.0


def slot_stats(con):
    """{(board, slot): {"games", "won", "points", "series", "average", "high"}} over every
    game with a state: a board's player 1 and player 2 (boards have no names)."""
    table = {}
    for record in list_games(con, oldest_first=True):
        final = record.final
        packed = con.execute("SELECT packed FROM games WHERE id=?", (record.game,)
                             ).fetchone()[0]
        for slot, (points, innings, high) in enumerate(
                _game_totals(con, record.game, final, packed), 1):
            entry = table.setdefault((record.board, slot), {
                "games": 0, "won": 0, "points": 0, "series": 0, "high": 0})
            entry["games"] += 1
            entry["won"] += final["winner"] == slot
            entry["points"] += points
            entry["series"] += innings
            entry["high"] = max(entry["high"], high)
    for entry in table.values():
        _average(entry, "series")
    return table


def player_stats(db, keep=True):
    """Per player name and rules id: games, won, points, innings, average (points per
    inning) and high series, over finished games where the name was set; best first (by
    rules id, then average, then games won). ``keep``: keep the totals worked out in the
    file (the club app); False changes nothing (`tools.logger stats`)."""
    con = db.reader()
    if not named(con):
        return []
    # games whose kept totals are missing or older than their final state
    stale = [row[0] for row in con.execute(
        "SELECT DISTINCT g.id FROM club_seats s JOIN games g ON g.id = s.game "
        "LEFT JOIN club_game_totals t ON t.game = g.id WHERE g.status = 'finished' "
        "AND (t.final_rank IS NULL OR t.final_rank != g.final_rank)")]
    # {} once kept (the sums below count them); else what was worked out now
    worked = _keep_totals(db, stale, keep) if stale else {}
    table = {}

    def add(name, rules, games, won, points, innings, high):
        entry = table.setdefault((name_key(name), rules), {
            "name": name, "rules": rules, "games": 0, "won": 0, "points": 0,
            "innings": 0, "high": 0})
        entry["games"] += games
        entry["won"] += won
        entry["points"] += points
        entry["innings"] += innings
        entry["high"] = max(entry["high"], high)

    for row in con.execute(
            "SELECT p.name, g.rules, COUNT(*), SUM(g.winner = CAST(s.slot AS TEXT)), "
            "SUM(CASE s.slot WHEN 1 THEN t.points1 ELSE t.points2 END), "
            "SUM(CASE s.slot WHEN 1 THEN t.innings1 ELSE t.innings2 END), "
            "MAX(CASE s.slot WHEN 1 THEN t.high1 ELSE t.high2 END) "
            "FROM club_seats s JOIN club_players p ON p.id = s.player "
            "JOIN games g ON g.id = s.game JOIN club_game_totals t ON t.game = g.id "
            "AND t.final_rank = g.final_rank WHERE g.status = 'finished' "
            "GROUP BY p.id, g.rules"):
        add(*row)
    # totals worked out now but not kept (reading only, or the logger held the file)
    for game, (p1, p2, i1, i2, h1, h2) in worked.items():
        for slot, name, rules, winner in con.execute(
                "SELECT s.slot, p.name, g.rules, g.winner FROM club_seats s "
                "JOIN club_players p ON p.id = s.player JOIN games g ON g.id = s.game "
                "WHERE s.game = ?", (game,)):
            first = slot == 1
            add(name, rules, 1, int(winner == str(slot)), p1 if first else p2,
                i1 if first else i2, h1 if first else h2)
    out = list(table.values())
    for entry in out:
        _average(entry, "innings")
    out.sort(key=lambda e: (e["rules"], -e["average"], -e["won"], name_key(e["name"])))
    return out


def _keep_totals(db, games, keep):
    """Work out each game's (points 1, 2, innings 1, 2, high 1, 2) and keep them in
    club_game_totals with the final state's rank they belong to (a later state makes them
    be worked out again). Returns {} once kept; {game: totals} when they could not be
    kept (reading only, or busy)."""
    out, rows = {}, []
    con = db.reader()
    for game in games:
        final, packed, rank = con.execute(
            "SELECT final, packed, final_rank FROM games WHERE id=?", (game,)).fetchone()
        (p1, i1, h1), (p2, i2, h2) = _game_totals(con, game, json.loads(final), packed)
        out[game] = (p1, p2, i1, i2, h1, h2)
        rows.append((game, rank, p1, p2, i1, i2, h1, h2))
    if not keep:
        return out
    try:
        with db.write() as writer:
            writer.executemany("INSERT OR REPLACE INTO club_game_totals "
                               "VALUES (?,?,?,?,?,?,?,?)", rows)
    except sqlite3.OperationalError:
        return out  # the logger holds the file: kept next time instead
    return {}
