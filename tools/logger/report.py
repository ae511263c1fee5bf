"""What the logger tells about its database: statistics and a view of its tables.

    print(stats_text(records))     # records: tools.records.Records.reading(path)
    print(view_text(con))          # every table: its row count and latest rows

In ``stats``, a player is a board's player 1 or player 2 (boards have no player names);
where the club app (tools.club) has set names, a second table gives the statistics by name
as its Players page does. Both come from tools.records.stats (docs/club.md says what
counts). The export is tools.records.export's: the same lines as the club's export pages.
"""

import unicodedata

from tools.logger.frames import printable
from tools.records.database import TABLES
from tools.records.names import named


def stats_text(records):
    lines = ["%-20s %6s %5s %4s %7s %7s %8s %5s" % (
        "board", "player", "games", "won", "points", "series", "average", "high")]
    for (board, player), e in sorted(records.slot_stats().items()):
        lines.append("%-20s %6d %5d %4d %7d %7d %8.3f %5d" % (
            board, player, e["games"], e["won"], e["points"], e["series"], e["average"],
            e["high"]))
    if named(records.con):
        lines += ["", "by name (finished games where the club app set the names; docs/club.md)",
                  "%-24s %-8s %5s %4s %7s %7s %8s %5s" % (
                      "name", "rules", "games", "won", "points", "innings", "average", "high")]
        for e in records.player_stats():
            lines.append("%-24s %-8s %5d %4d %7d %7d %8.3f %5d" % (
                _name_cell(e["name"]), e["rules"], e["games"], e["won"], e["points"],
                e["innings"], e["average"], e["high"]))
    return "\n".join(lines)


def _name_cell(name):
    """A name for the terminal: letters of any script kept, control characters escaped."""
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


def claims_text(con):
    """One line: the states by verdict, and the stored records the rules refuse."""
    version = con.execute("PRAGMA user_version").fetchone()[0]
    if version < 3:
        return "claims: not judged (a version %d file)" % version
    counts = dict(con.execute("SELECT COALESCE(verdict, 'unjudged'), COUNT(*) FROM "
                                   "states GROUP BY 1").fetchall())
    games = con.execute("SELECT GROUP_CONCAT(DISTINCT game) FROM states WHERE "
                             "verdict='disputed'").fetchone()[0]
    refused = con.execute("SELECT COUNT(*) FROM events WHERE refused=1").fetchone()[0]
    return "claims: %s; disputed in games: %s; records the rules refuse: %d" % (
        ", ".join("%d %s" % (counts[k], k) for k in sorted(counts)) or "none",
        games or "none", refused)


def view_text(con, rows=5, width=110):
    parts = [claims_text(con)]
    for table in TABLES:
        columns = [row[1] for row in con.execute("PRAGMA table_info(%s)" % table)]
        first = [c for c in FIRST.get(table, ()) if c in columns]
        order = first + [c for c in columns if c not in first]
        cursor = con.execute("SELECT %s FROM %s ORDER BY rowid DESC LIMIT ?"
                                  % (", ".join(order), table), (rows,))
        names = [d[0] for d in cursor.description]
        latest = cursor.fetchall()
        count = con.execute("SELECT COUNT(*) FROM %s" % table).fetchone()[0]
        parts.append("== %s (%d rows)" % (table, count))
        parts.append(" | ".join(names)[:width])
        for row in reversed(latest):
            parts.append(" | ".join(_cell(v) for v in row)[:width])
    return "\n".join(parts)
