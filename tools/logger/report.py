"""What the logger tells about its database: export, per-player statistics, a table view.

    for line in export_lines(store, game=None, fmt="json"): print(line)
    print(stats_text(store))
    print(view_text(store))        # every table: its row count and latest rows

In ``stats``, a player is a board's player 1 or player 2 (boards have no player names);
where the club app (tools.club) has set names, a second table gives the statistics by name
as its Players page does. ``export`` carries
those names where the club app has stored them: `names` [player 1, player 2] in JSON (null
where none was given), `name1`, `name2` as the last CSV columns (empty where none).
Points are what the final state counts (in ceb, the sum of the shots' points over all
sets), series are the innings begun, the average is points per series. Shots are replayed
from the stored event records (rules_core), so they always agree with the final state.
"""

import csv
import io
import json

from tools.club.store import names_by_game
from tools.logger.frames import printable, record_fields
from tools.logger.store import TABLES

CSV_FIELDS = ("game", "board", "game_no", "rules", "distance1", "distance2", "status",
              "winner", "shots", "score1", "score2", "innings1", "innings2", "high1", "high2",
              "sets1", "sets2", "marked", "member1", "member2", "name1", "name2")


def game_record(store, row, names=None):
    """One game as export gives it; ``names``: {game: [name 1, name 2]} (read when None)."""
    game, board, game_no, started, updated, final, game_id, _ = row
    if names is None:
        names = names_by_game(store.db, [game])
    replayed, refused, proven = store.final_replay(game)
    shots = [dict({"number": n, "player": p, "points": pts, "to": to}, **record_fields(record))
             for n, p, pts, to, record in replayed]
    return {"game": game, "board": board, "game_no": game_no, "game_id": game_id,
            "names": names.get(game, [None, None]),
            # the stored events replay to the final state: worked out here, from the file
            "complete": proven, "started": started, "updated": updated,
            "final": json.loads(final), "shots": shots,
            # times the board came back with fewer events than stored, and how many of
            # the stored ones it still lacks (tools.logger --restore-lost hands them back)
            "losses": store.losses(game), "lost_events": len(store.lost_events(game)),
            # the board's states the stored events do not give (never the final one), and
            # the stored records the rules refuse (left out of the replay)
            "disputed": store.disputed(game),
            "refused": sorted(set(refused) | set(store.flagged(game)))}


def export_lines(store, game=None, fmt="json", day=None, table=None, player=None):
    """The export's lines; ``day`` ("YYYY-MM-DD", local time, when the game began),
    ``table`` (a board id) and ``player`` (a name the club app set) narrow it as the club's
    Results page does (tools.club.store.ClubError for a day not so written)."""
    from tools.club.store import ClubStore, clean_name, day_bounds

    if day:
        day_bounds(day)  # a day out of range is refused whatever the database holds
    if player:
        clean_name(player)
    rows = store.games(game)
    if day or table or player:

        chosen = ({g["game"] for g in ClubStore.reading(store).games(day, table, player)}
                  if names_by_game(store.db) or not player else set())
        rows = [row for row in rows if row[0] in chosen]
    names = names_by_game(store.db, None if game is None else [game])
    records = [game_record(store, row, names) for row in rows]
    if fmt == "json":
        return [json.dumps(record, separators=(",", ":")) for record in records]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_FIELDS)
    for r in records:
        f = r["final"]
        writer.writerow((r["game"], r["board"], r["game_no"], f["rules"], f["distance"][0],
                         f["distance"][1], f["status"], "" if f["winner"] is None else f["winner"],
                         f["shots"], *f["score"], *f["innings"], *f["high"], *f["sets"],
                         *_marks(f), *("" if n is None else n for n in r["names"])))
    return out.getvalue().splitlines()


def _marks(final):
    """CSV cells for ceb's marked ball and team members; empty where the state has none
    (other rules, singles, and states stored before the board sent them)."""
    members = final.get("members") or ("", "")
    marked = final.get("marked")
    return ("" if marked is None else marked, members[0], members[1])


def player_stats(store):
    """{(board, player): {"games", "won", "points", "series", "average", "high"}}."""
    table = {}
    for row in store.games():
        record = game_record(store, row)
        final = record["final"]
        for index in (0, 1):
            player = index + 1
            entry = table.setdefault((record["board"], player), {
                "games": 0, "won": 0, "points": 0, "series": 0, "high": 0})
            if final["rules"] == "ceb":
                points = sum(s["points"] for s in record["shots"] if s["to"] == player)
            else:
                points = final["score"][index]
            entry["games"] += 1
            entry["won"] += final["winner"] == player
            entry["points"] += points
            entry["series"] += final["innings"][index]
            entry["high"] = max(entry["high"], final["high"][index])
    for entry in table.values():
        entry["average"] = round(entry["points"] / entry["series"], 3) if entry["series"] else 0
    return table


def stats_text(store):
    lines = ["%-20s %6s %5s %4s %7s %7s %8s %5s" % (
        "board", "player", "games", "won", "points", "series", "average", "high")]
    for (board, player), e in sorted(player_stats(store).items()):
        lines.append("%-20s %6d %5d %4d %7d %7d %8.3f %5d" % (
            board, player, e["games"], e["won"], e["points"], e["series"], e["average"],
            e["high"]))
    if names_by_game(store.db):
        lines += ["", "by name (finished games where the club app set the names; docs/club.md)",
                  "%-24s %-8s %5s %4s %7s %7s %8s %5s" % (
                      "name", "rules", "games", "won", "points", "innings", "average", "high")]
        from tools.club.store import ClubStore

        for e in ClubStore.reading(store).player_stats():
            lines.append("%-24s %-8s %5d %4d %7d %7d %8.3f %5d" % (
                _name_cell(e["name"]), e["rules"], e["games"], e["won"], e["points"],
                e["innings"], e["average"], e["high"]))
    return "\n".join(lines)


def _name_cell(name):
    """A name for the terminal: letters of any script kept, control characters escaped."""
    import unicodedata

    return "".join(printable(ch) if unicodedata.category(ch)[0] == "C" else ch
                   for ch in name)


def _cell(value):
    if value is None:
        return ""
    if isinstance(value, bytes):
        return value.hex()
    return printable(value)  # text from the wire never reaches the terminal raw


# The board's word first, where a row is wider than the screen: what the logger made of it.
FIRST = {"states": ("id", "game", "verdict", "seq", "rank", "stale", "received", "state"),
         "events": ("id", "game", "kind", "number", "refused")}


def claims_text(store):
    """One line: the states by verdict, and the stored records the rules refuse."""
    if store.version < 3:
        return "claims: not judged (a version %d file)" % store.version
    counts = dict(store.db.execute("SELECT COALESCE(verdict, 'unjudged'), COUNT(*) FROM "
                                   "states GROUP BY 1").fetchall())
    games = store.db.execute("SELECT GROUP_CONCAT(DISTINCT game) FROM states WHERE "
                             "verdict='disputed'").fetchone()[0]
    refused = store.db.execute("SELECT COUNT(*) FROM events WHERE refused=1").fetchone()[0]
    return "claims: %s; disputed in games: %s; records the rules refuse: %d" % (
        ", ".join("%d %s" % (counts[k], k) for k in sorted(counts)) or "none",
        games or "none", refused)


def view_text(store, rows=5, width=110):
    parts = [claims_text(store)]
    for table in TABLES:
        columns = [row[1] for row in store.db.execute("PRAGMA table_info(%s)" % table)]
        first = [c for c in FIRST.get(table, ()) if c in columns]
        order = first + [c for c in columns if c not in first]
        cursor = store.db.execute("SELECT %s FROM %s ORDER BY rowid DESC LIMIT ?"
                                  % (", ".join(order), table), (rows,))
        names = [d[0] for d in cursor.description]
        latest = cursor.fetchall()
        count = store.db.execute("SELECT COUNT(*) FROM %s" % table).fetchone()[0]
        parts.append("== %s (%d rows)" % (table, count))
        parts.append(" | ".join(names)[:width])
        for row in reversed(latest):
            parts.append(" | ".join(_cell(v) for v in row)[:width])
    return "\n".join(parts)
