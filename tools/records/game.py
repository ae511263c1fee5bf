"""One game as the records hold it (GameRecord), and the queries that find games.

    record = read_game(con, 12)                # None, or the game with its replay
    record.final, record.names, record.shots, record.series, record.scores, record.complete
    found = list_games(con, day="2026-11-30", table="T04", player="Anna", limit=100)
    current_games(con)                         # each board's latest game, by board id
    history(con, 12)                           # the records its final state counts
    table_label("543031"), find_board("T01", boards)   # "T01", "543031": a table's name

A game is known by its number, `game` (the logger's row id: what exports, URLs and
`--game N` say); `board` is the id of the board that played it (hex), `game_no` the
board's own count of its games and `game_id` the identity the board made with it. Its
`final` is the board state the records believe (docs/protocol.md, "Believed states").
Every page, export and statistic reads a game through here, and its shots through one
replay of the stored events (tools.records.replay.Replay).
"""

import datetime
import json
import time
import zlib
from dataclasses import dataclass, field
from functools import cached_property

from tools.records.names import RecordError, names_by_game, player_ids
from tools.records.replay import Replay, held_records, proven_by

GAME_MAX = (1 << 63) - 1  # SQLite's largest row id


def game_number(text):
    """A game's number from text a person or a URL gave: plain ASCII digits, 1 to
    2**63 - 1; RecordError otherwise (never an OverflowError further down)."""
    text = str(text).strip()
    if not text.isascii() or not text.isdigit() or len(text) > 19 or not (
            1 <= int(text) <= GAME_MAX):
        raise RecordError("a game's number is a whole number from 1 to %d, not %s"
                          % (GAME_MAX, shown(text)))
    return int(text)


def shown(text, limit=24):
    """``text`` quoted for a message: cut short, control characters escaped."""
    short = text[:limit] + ("..." if len(text) > limit else "")
    return repr(short)


def table_label(board):
    """What a table is called everywhere (pages, links, filters, QR codes): its board id as
    text where the id is short printable text (T01, the name a club gives its boards),
    else the board id as the logger keys it (hex)."""
    try:
        text = bytes.fromhex(board).decode("ascii")
    except (ValueError, UnicodeDecodeError):
        return board
    if 1 <= len(text) <= 12 and all(c.isascii() and (c.isalnum() or c in "-_")
                                    for c in text):
        return text
    return board


def find_board(name, boards):
    """The board id among ``boards`` that ``name`` (a table's name, or its board id in hex)
    names; None when none does. A table's name wins over a board id that reads the same."""
    name = str(name)
    for board in boards:
        if table_label(board) == name:
            return board
    low = name.lower()
    return low if low in boards else None


def day_bounds(day):
    """(start, end) in seconds since the epoch of a local calendar day "YYYY-MM-DD"."""
    if isinstance(day, str):
        text = day
        try:
            if not text.isascii():
                raise ValueError
            day = datetime.date.fromisoformat(text)
        except ValueError:
            raise RecordError("a day is written YYYY-MM-DD, not %s" % shown(text)) from None
    try:
        start = datetime.datetime.combine(day, datetime.time())
        end = start + datetime.timedelta(days=1)
        return time.mktime(start.timetuple()), time.mktime(end.timetuple())
    except (OverflowError, ValueError):
        raise RecordError("%s is past the days this clock can count (up to 9999-12-30)"
                          % day.isoformat()) from None


@dataclass
class GameRecord:
    """One stored game. ``final_text`` is the final state as stored (JSON text; ``final``
    the same as a dict); ``names`` [name 1 or None, name 2 or None]. read_game() also
    fills ``replay`` (shots, series, scores, refused), ``complete`` (the stored events
    replay to the final state, worked out from the file), ``disputed`` (claims the stored
    events do not give), ``flagged`` (records the logger found the rules refuse),
    ``losses`` and ``lost_events`` (a board that came back short)."""

    game: int
    board: str
    game_no: int
    final_text: str
    started: float = None
    updated: float = None
    names: list = field(default_factory=lambda: [None, None])
    game_id: str = None
    last_seen: float = None
    replay: Replay = None
    complete: bool = False
    disputed: int = 0
    flagged: list = field(default_factory=list)
    losses: int = 0
    lost_events: int = 0

    @cached_property
    def final(self):
        return json.loads(self.final_text)

    @property
    def shots(self):
        return self.replay.shots

    @property
    def series(self):
        return self.replay.series

    @property
    def scores(self):
        return self.replay.scores

    @property
    def set_results(self):
        """The sets decided so far: [{"set", "score", "winner"}] (the points that won each
        one, before the board's score went back to 0 : 0)."""
        return self.replay.sets

    @property
    def label(self):
        return table_label(self.board)

    @property
    def refused(self):
        """Numbers of the stored records the rules refuse (left out of the replay)."""
        return sorted(set(self.replay.refused) | set(self.flagged))

    @property
    def replayed(self):
        """Every shot the final state counts was replayed, and none refused."""
        return len(self.shots) == self.final["shots"] and not self.replay.refused

    def export(self):
        """The game as `tools.logger export` gives it (one JSON object a line)."""
        shots = [{"number": s["number"], "player": s["player"], "points": s["points"],
                  "to": s["to"], "pins": s["pins"], "carom": s["carom"], "foul": s["foul"],
                  # begun before the pins were all set (docs/protocol.md, "Pins set?")
                  "unset": s["unset"]}
                 for s in self.shots]
        return {"game": self.game, "board": self.board, "game_no": self.game_no,
                "game_id": self.game_id, "names": self.names,
                # the stored events replay to the final state: worked out from the file
                "complete": self.complete, "started": self.started,
                "updated": self.updated, "final": self.final, "shots": shots,
                # times the board came back with fewer events than stored, and how many of
                # the stored ones it still lacks (tools.logger --restore-lost hands them
                # back)
                "losses": self.losses, "lost_events": self.lost_events,
                # the board's states the stored events do not give (never the final one),
                # and the stored records the rules refuse (left out of the replay)
                "disputed": self.disputed, "refused": self.refused}


def history(con, game):
    """The records the game's final state counts, as far as they are held: a list with
    None where an event is missing."""
    row = con.execute("SELECT history FROM games WHERE id=?", (game,)).fetchone()
    count = row[0] if row and row[0] is not None else 0
    held = held_records(con, game)[:count]
    return held + [None] * (count - len(held))


def lost_events(con, game):
    """The records stored beyond what the board's final state counts, when the board
    holds a prefix of what is stored (its count and CRC match the first records): the
    events a board that came back short has lost. [] when nothing is lost."""
    row = con.execute("SELECT history, history_crc FROM games WHERE id=?", (game,)).fetchone()
    if row is None or row[0] is None:
        return []
    count = row[0]
    held = held_records(con, game)
    if len(held) <= count or None in held:
        return []
    prefix = b"".join(held[:count])
    if (zlib.crc32(prefix) if prefix else 0) != row[1]:
        return []  # the board holds another story than the one stored: not a prefix
    return held[count:]


def _version(con):
    return con.execute("PRAGMA user_version").fetchone()[0]


def read_game(con, game, names=None):
    """The game numbered ``game`` with its replay, or None (no such game, or no state of
    it yet). ``names``: {game: names} already read (read here when None)."""
    row = con.execute(
        "SELECT g.id, b.key, g.game_no, g.final, g.started, g.updated, g.game_id, g.packed, "
        "g.history, g.history_crc FROM games g JOIN boards b ON b.id = g.board "
        "WHERE g.id=? AND g.final IS NOT NULL", (game,)).fetchone()
    if row is None:
        return None
    number, board, game_no, final, started, updated, game_id, packed, count, crc = row
    if names is None:
        names = names_by_game(con, [number])
    records = history(con, number)
    replay = Replay.of(packed, records)
    judged = _version(con) >= 3  # a version 2 file's claims were never judged
    return GameRecord(
        number, board, game_no, final, started, updated, names.get(number, [None, None]),
        game_id, replay=replay,
        complete=proven_by(packed, count, crc, records, replay.refused, replay.game),
        disputed=con.execute("SELECT COUNT(*) FROM states WHERE game=? AND "
                             "verdict='disputed'", (number,)).fetchone()[0] if judged else 0,
        flagged=[r[0] for r in con.execute(
            "SELECT DISTINCT number FROM events WHERE game=? AND refused=1 ORDER BY number",
            (number,))] if judged else [],
        losses=con.execute("SELECT COUNT(*) FROM losses WHERE game=?",
                           (number,)).fetchone()[0],
        lost_events=len(lost_events(con, number)))


def list_games(con, day=None, table=None, player=None, limit=None, oldest_first=False):
    """Games with a stored state, newest first (``oldest_first``: by number), without
    their replay. ``day``: "YYYY-MM-DD" (local time, by when the game began); ``table``:
    a table's name or board id; ``player``: a name."""
    sql = ["SELECT g.id, b.key, g.game_no, g.final, g.started, g.updated, g.game_id "
           "FROM games g JOIN boards b ON b.id = g.board"]
    where, args = ["g.final IS NOT NULL"], []
    if day:
        start, end = day_bounds(day)
        where.append("g.started >= ? AND g.started < ?")
        args += [start, end]
    if table:
        boards = [row[0] for row in con.execute("SELECT key FROM boards")]
        where.append("b.key = ?")
        args.append(find_board(table, boards) or table)  # T04, or its board id
    if player:
        ids = player_ids(con, player)[:500]
        where.append("g.id IN (SELECT game FROM club_seats WHERE player IN (%s))"
                     % ",".join("?" * len(ids)))
        args += ids
    sql.append("WHERE " + " AND ".join(where))
    sql.append("ORDER BY g.id" if oldest_first else "ORDER BY g.started DESC, g.id DESC")
    if limit is not None:
        sql.append("LIMIT ?")
        args.append(int(limit))
    rows = con.execute(" ".join(sql), args).fetchall()
    names = names_by_game(con, [r[0] for r in rows])
    return [GameRecord(*row[:6], names=names.get(row[0], [None, None]), game_id=row[6])
            for row in rows]


# Each board's latest game: the one whose state the board sent last in its own order.
CURRENT = (
    "SELECT g.id, b.key, g.game_no, g.final, g.started, g.updated, b.last_seen FROM boards b "
    "JOIN games g ON g.id = (SELECT id FROM games WHERE board=b.id AND final IS NOT NULL "
    "ORDER BY final_rank DESC LIMIT 1) ORDER BY b.key")


def current_games(con):
    """Each board's latest game (the live tables), by board id, with its names and when
    the board was last heard (``last_seen``)."""
    rows = con.execute(CURRENT).fetchall()
    names = names_by_game(con, [r[0] for r in rows])
    return [GameRecord(*row[:6], names=names.get(row[0], [None, None]), last_seen=row[6])
            for row in rows]


# The logger sets a game's final_rank with its final state: "final_rank IS NOT NULL" is
# "has a state", and the counts below read the indexes alone.

def days(con):
    """[(day "YYYY-MM-DD", games)] with games, newest first (local time)."""
    return con.execute(
        "SELECT date(started, 'unixepoch', 'localtime') AS d, COUNT(*) FROM games "
        "WHERE final_rank IS NOT NULL GROUP BY d ORDER BY d DESC").fetchall()


def tables(con):
    """[(board id, games)] by board id."""
    return con.execute(
        "SELECT b.key, COUNT(g.id) FROM boards b JOIN games g ON g.board = b.id "
        "WHERE g.final_rank IS NOT NULL GROUP BY b.id ORDER BY b.key").fetchall()
