"""The logger's SQLite database: boards, boots, games, events, states, errors, link counters.

    store = Store("games.db")                 # WAL mode; tables made when missing
    store = Store("games.db", create=False)   # export/stats/view: StoreError unless ours
    with store.transaction():                 # one read burst: all of it or nothing
        board = store.board("a1b2c3", "/dev/ttyUSB1", hello)
        rank = store.rank(board, boot_id, stamp)
        game = store.game(board, fields)      # by the game's own 8-byte identity
        store.event(game, fields, rank) ; store.undo(game, fields, rank)
        store.state(game, fields, rank)       # its verdict: proven, missing, disputed, stale
    store.final(game)                         # the game's last believed board state, a dict
    store.history(game)                       # the event records its final state counts
    for number, record, g in replay_steps(packed, records, refused): ...   # the rules core

Stored facts are only ever added: an undo is a row of its own, and no frame from the wire
deletes a row. Every board state is kept as a claim and judged against the stored events
(docs/protocol.md, "Believed states"): **proven** when the records it counts are all
held, their CRC-32 is the one it carries, and the rules core replays them, from the
settings it names, to exactly its bytes; **missing** while some are not held yet (the
logger asks for them); **disputed** when they are all held and do not give it (another
CRC, a record the rules refuse, another state, other settings than the game's). A game's
final state is its newest claim that is not disputed, and `complete` says that the
final state is proven; a disputed claim never becomes final, and a claim judged again
when events arrive may change its verdict. Events, claims, verdicts and the final state
change in one transaction. Frames are ordered by the board's boot (in the order the
logger first saw it) and the frame's stamp within that boot; a state older than the
final one is kept in `states` (stale) but never becomes the game's final state.
"""

import contextlib
import json
import os
import sqlite3
import time
import zlib

from rules_core import Game, GameError
from rules_core.savedstate import settings_of
from rules_core.snapshot import pack_state

APPLICATION_ID = 0x50494E42  # "PINB": this file is a pinboard logger database
SCHEMA_VERSION = 3
# Version 2 lacks the claims' verdicts, refused records and frame marks: read as it is,
# and brought to version 3 in place when a logger or the club app opens it to write.
READABLE = (2, 3)
VERDICTS = ("proven", "missing", "disputed", "stale")
JUDGED_AGAIN = 8  # open claims judged again when a game's events change, newest first
REPLAYS_KEPT = 64  # games whose replayed state is kept between judgements

SCHEMA = """
CREATE TABLE IF NOT EXISTS boards (
    id INTEGER PRIMARY KEY, key TEXT UNIQUE NOT NULL, port TEXT, firmware TEXT,
    protocol INTEGER, reset_cause TEXT, boots INTEGER NOT NULL DEFAULT 0,
    first_seen REAL, last_seen REAL);
CREATE TABLE IF NOT EXISTS boots (
    id INTEGER PRIMARY KEY, board INTEGER NOT NULL REFERENCES boards(id),
    boot_id TEXT NOT NULL, reset_cause TEXT, received REAL, UNIQUE (board, boot_id));
CREATE TABLE IF NOT EXISTS games (
    id INTEGER PRIMARY KEY, board INTEGER NOT NULL REFERENCES boards(id),
    game_id TEXT NOT NULL, game_no INTEGER NOT NULL, rules TEXT, distance1 INTEGER,
    distance2 INTEGER, sets INTEGER, status TEXT, winner TEXT,
    shots INTEGER NOT NULL DEFAULT 0, final TEXT, packed BLOB, final_rank INTEGER,
    history INTEGER, history_crc INTEGER, complete INTEGER NOT NULL DEFAULT 0,
    started REAL, updated REAL, UNIQUE (board, game_id));
CREATE TABLE IF NOT EXISTS events (
    id INTEGER PRIMARY KEY, game INTEGER NOT NULL REFERENCES games(id), kind TEXT NOT NULL,
    number INTEGER NOT NULL, record BLOB, player INTEGER, points INTEGER, to_player INTEGER,
    resent INTEGER NOT NULL DEFAULT 0, rank INTEGER NOT NULL, received REAL,
    refused INTEGER NOT NULL DEFAULT 0, UNIQUE (game, rank));
CREATE TABLE IF NOT EXISTS states (
    id INTEGER PRIMARY KEY, game INTEGER NOT NULL REFERENCES games(id), seq INTEGER,
    rank INTEGER, stale INTEGER NOT NULL DEFAULT 0, received REAL, state TEXT NOT NULL,
    verdict TEXT, packed BLOB, history INTEGER, history_crc INTEGER);
CREATE TABLE IF NOT EXISTS errors (
    id INTEGER PRIMARY KEY, board INTEGER REFERENCES boards(id), port TEXT, code INTEGER,
    ref INTEGER, detail TEXT, received REAL);
CREATE TABLE IF NOT EXISTS link_stats (
    port TEXT PRIMARY KEY, board INTEGER REFERENCES boards(id), connected INTEGER,
    frames INTEGER, bad_frames INTEGER, noise_bytes INTEGER, gaps INTEGER,
    missing INTEGER, state_requests INTEGER, reconnects INTEGER,
    device_rx_frames INTEGER, device_rx_bad INTEGER, device_tx_frames INTEGER,
    replayed INTEGER, stale INTEGER, unknown_protocol INTEGER, events_requested INTEGER,
    db_busy INTEGER, silences INTEGER, no_key INTEGER, unsigned INTEGER, wrong_board INTEGER,
    repeated INTEGER, old_boot INTEGER, disputed INTEGER, updated REAL);
CREATE TABLE IF NOT EXISTS losses (
    id INTEGER PRIMARY KEY, game INTEGER NOT NULL REFERENCES games(id),
    board_events INTEGER, stored_events INTEGER, received REAL);
CREATE TABLE IF NOT EXISTS frame_marks (
    port TEXT NOT NULL, nonce TEXT NOT NULL, counter INTEGER, retired INTEGER NOT NULL
    DEFAULT 0, updated REAL, PRIMARY KEY (port, nonce));
CREATE INDEX IF NOT EXISTS states_by_game ON states(game);
CREATE INDEX IF NOT EXISTS events_by_game ON events(game, number);
CREATE INDEX IF NOT EXISTS games_by_board ON games(board);
"""

# Version 3's additions to version 2's tables (made by ALTER TABLE on an older file).
ADDED_COLUMNS = (
    ("events", "refused", "INTEGER NOT NULL DEFAULT 0"),
    ("states", "verdict", "TEXT"), ("states", "packed", "BLOB"),
    ("states", "history", "INTEGER"), ("states", "history_crc", "INTEGER"),
    *(("link_stats", name, "INTEGER") for name in (
        "silences", "no_key", "unsigned", "wrong_board", "repeated", "old_boot", "disputed")),
)
INDEXES = "CREATE INDEX IF NOT EXISTS states_by_game_rank ON states(game, rank);"

TABLES = ("boards", "boots", "games", "events", "states", "errors", "link_stats", "losses",
          "frame_marks")
LINK_COUNTERS = ("frames", "bad_frames", "noise_bytes", "gaps", "missing", "state_requests",
                 "reconnects", "device_rx_frames", "device_rx_bad", "device_tx_frames",
                 "replayed", "stale", "unknown_protocol", "events_requested", "db_busy",
                 "silences", "no_key", "unsigned", "wrong_board", "repeated", "old_boot",
                 "disputed")
BUSY_TIMEOUT_MS = 200  # short: the logger keeps reading its ports while it waits


class StoreError(Exception):
    """A database the logger must not use (missing, not SQLite, another program's)."""


def _check_ours(path):
    """Refuse, without changing anything, a file that is not a logger database."""
    if not os.path.exists(path):
        raise StoreError("%s: no such database" % path)
    if os.path.isdir(path):
        raise StoreError("%s: is a folder, not a database" % path)
    try:
        db = sqlite3.connect("file:%s?mode=ro" % _uri_path(path), uri=True)
        try:
            app = db.execute("PRAGMA application_id").fetchone()[0]
            version = db.execute("PRAGMA user_version").fetchone()[0]
        finally:
            db.close()
    except sqlite3.DatabaseError as e:
        raise StoreError("%s: not a SQLite database (%s)" % (path, e)) from None
    if app != APPLICATION_ID:
        raise StoreError("%s: not a pinboard logger database" % path)
    if version not in READABLE:
        raise StoreError("%s: logger database version %d; this logger reads versions %s"
                         % (path, version, " and ".join(map(str, READABLE))))


def _uri_path(path):
    from urllib.parse import quote

    return quote(os.path.abspath(path))


class Store:
    def __init__(self, path, create=True):
        self.path = path
        self._boots = {}  # (board, boot_id) -> row id: rows are never deleted
        self._games = {}  # (board, game_id) -> row id
        self._replays = {}  # game -> (settings, records joined, Game replayed to them)
        self._held_kept = {}  # game -> (event rows, highest rank, records held)
        self.refusals = []  # (game, number, why) of records the rules refused, to be said
        self.moved_final = None  # a game whose final state judge_open() changed
        if not create:
            _check_ours(path)
        elif os.path.exists(path) and os.path.getsize(path) > 0:
            _check_ours(path)
        else:
            folder = os.path.dirname(os.path.abspath(path))
            os.makedirs(folder, exist_ok=True)  # e.g. ~/.pinboard on a first `make sim`
        try:
            self.db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
            self.db.execute("PRAGMA busy_timeout=%d" % BUSY_TIMEOUT_MS)
            if create:
                self._setup()
            self.version = self.db.execute("PRAGMA user_version").fetchone()[0]
        except sqlite3.DatabaseError as e:
            raise StoreError("%s: %s" % (path, e)) from None

    def _setup(self):
        deadline = time.monotonic() + 30
        while True:
            try:
                self.db.execute("PRAGMA journal_mode=WAL")
                self.db.execute("PRAGMA synchronous=NORMAL")
                self.db.executescript(SCHEMA)
                self._upgrade()
                self.db.executescript(INDEXES)
                self.db.execute("PRAGMA application_id=%d" % APPLICATION_ID)
                self.db.execute("PRAGMA user_version=%d" % SCHEMA_VERSION)
                return
            except sqlite3.OperationalError as e:
                if not is_busy(e) or time.monotonic() > deadline:
                    raise
                time.sleep(0.1)

    def _upgrade(self):
        """Version 2's tables gain version 3's columns (nothing else changes: the claims
        stored before have no verdict, and are never judged again)."""
        for table, column, kind in ADDED_COLUMNS:
            have = {row[1] for row in self.db.execute("PRAGMA table_info(%s)" % table)}
            if column not in have:
                self.db.execute("ALTER TABLE %s ADD COLUMN %s %s" % (table, column, kind))

    def close(self):
        self.db.close()

    @contextlib.contextmanager
    def transaction(self):
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield self
        except BaseException:
            self.db.execute("ROLLBACK")
            self._boots.clear()  # a row made in the rolled-back transaction is gone
            self._games.clear()
            self.refusals.clear()  # noted again when the burst is stored again
            raise
        self.db.execute("COMMIT")

    # -- boards and boots -------------------------------------------------------------------

    def board(self, key, port, hello=None):
        """Row id of the board called ``key``, made on first sight; a hello counts a boot."""
        now = time.time()
        row = self.db.execute("SELECT id FROM boards WHERE key=?", (key,)).fetchone()
        if row is None:
            board = self.db.execute(
                "INSERT INTO boards (key, port, first_seen, last_seen) VALUES (?,?,?,?)",
                (key, port, now, now)).lastrowid
        else:
            board = row[0]
            self.db.execute("UPDATE boards SET port=?, last_seen=? WHERE id=?",
                            (port, now, board))
        if hello is not None:
            self.db.execute(
                "UPDATE boards SET firmware=?, protocol=?, reset_cause=? WHERE id=?",
                (hello["firmware"], hello["protocol"], hello["reset_cause"], board))
        return board

    def boot(self, board, boot_id, reset_cause=None):
        """(boot row id, new): the board's boot called ``boot_id``, made on first sight."""
        known = self._boots.get((board, boot_id))
        if known is not None:
            return known, False
        row = self.db.execute("SELECT id FROM boots WHERE board=? AND boot_id=?",
                              (board, boot_id)).fetchone()
        if row is not None:
            self._boots[(board, boot_id)] = row[0]
            return row[0], False
        boot = self.db.execute(
            "INSERT INTO boots (board, boot_id, reset_cause, received) VALUES (?,?,?,?)",
            (board, boot_id, reset_cause, time.time())).lastrowid
        self.db.execute("UPDATE boards SET boots=boots+1 WHERE id=?", (board,))
        return boot, True  # cached once committed: a rolled-back insert must not stay

    def latest_boot(self, board):
        row = self.db.execute("SELECT MAX(id) FROM boots WHERE board=?", (board,)).fetchone()
        return row[0]

    def rank(self, board, boot_id, stamp):
        """The order of a frame among all the board's frames: boot first, then stamp."""
        boot, _ = self.boot(board, boot_id)
        return boot << 32 | stamp

    # -- games ------------------------------------------------------------------------------

    def game(self, board, fields):
        """Row id of the game with the frame's identity, made on first sight."""
        known = self._games.get((board, fields["game_id"]))
        if known is not None:
            return known
        row = self.db.execute("SELECT id FROM games WHERE board=? AND game_id=?",
                              (board, fields["game_id"])).fetchone()
        if row is not None:
            self._games[(board, fields["game_id"])] = row[0]
            return row[0]
        now = time.time()
        return self.db.execute(
            "INSERT INTO games (board, game_id, game_no, started, updated) VALUES (?,?,?,?,?)",
            (board, fields["game_id"], fields["game"], now, now)).lastrowid

    def event(self, game, fields, rank):
        self.db.execute(
            "INSERT OR IGNORE INTO events (game, kind, number, record, player, points, "
            "to_player, resent, rank, received) VALUES (?,?,?,?,?,?,?,?,?,?)",
            (game, "event", fields["index"], bytes(fields["record"]), fields["player"],
             fields["points"], fields["to"], int(fields["resent"]), rank, time.time()))

    def undo(self, game, fields, rank):
        self.db.execute(
            "INSERT OR IGNORE INTO events (game, kind, number, rank, received) "
            "VALUES (?,?,?,?,?)", (game, "undo", fields["history"], rank, time.time()))

    def state(self, game, fields, rank, seq=None):
        """Store a board state as a claim and judge it against the stored events. Returns
        its verdict: "proven" or "missing" (it is now the game's final state), "disputed"
        (kept and flagged, never final), "stale" (older than the final state: history)."""
        text = json.dumps(fields["state"], separators=(",", ":"))
        final_rank = self.final_rank(game)
        stale = final_rank is not None and rank <= final_rank
        claim = (fields["packed"], fields["history"], fields["history_crc"])
        verdict = "stale" if stale else self._judge(game, *claim)
        row = self.db.execute(
            "INSERT INTO states (game, seq, rank, stale, received, state, verdict, packed, "
            "history, history_crc) VALUES (?,?,?,?,?,?,?,?,?,?)",
            (game, seq, rank, int(stale), time.time(), text, verdict, *claim)).lastrowid
        if verdict in ("proven", "missing"):
            self._make_final(game, row)
        return verdict

    def _make_final(self, game, row):
        """The claim in states row `row` becomes the game's final state."""
        text, packed, rank, history, crc, verdict = self.db.execute(
            "SELECT state, packed, rank, history, history_crc, verdict FROM states "
            "WHERE id=?", (row,)).fetchone()
        state = json.loads(text)
        winner = state.get("winner")
        self.db.execute(
            "UPDATE games SET rules=?, distance1=?, distance2=?, sets=?, status=?, winner=?, "
            "shots=?, final=?, packed=?, final_rank=?, history=?, history_crc=?, complete=?, "
            "updated=? WHERE id=?",
            (state["rules"], state["distance"][0], state["distance"][1],
             state.get("best_of", 1), state["status"],
             None if winner is None else str(winner), state["shots"], text, packed,
             rank, history, crc, int(verdict == "proven"), time.time(), game))

    def _judge(self, game, packed, count, crc, held=None):
        """A claim's verdict against the events stored now (see the module's docstring)."""
        if held is None:
            held = self._held_now(game)
        records = held[:count]
        if len(records) < count or None in records:
            return "missing"
        joined = b"".join(records)
        if (zlib.crc32(joined) if joined else 0) != crc:
            return "disputed"  # the board counts other events (they are asked for again)
        settings = settings_of(bytes(packed))
        first = self.db.execute(  # the game's first proven claim, else its first open one
            "SELECT packed FROM states WHERE game=? AND verdict IN ('proven', 'missing') "
            "ORDER BY verdict = 'proven' DESC, rank LIMIT 1", (game,)).fetchone()
        if first is not None and settings_of(bytes(first[0])) != settings:
            return "disputed"  # a game keeps the settings it began with
        replayed = self._replayed(game, settings, joined, records)
        if replayed is None:
            return "disputed"  # a record the rules refuse: the board cannot have applied it
        return "proven" if pack_state(replayed) == bytes(packed) else "disputed"

    def _replayed(self, game, settings, joined, records):
        """The game replayed to `records` (its stored events, joined), from `settings`;
        None when the rules refuse one (flagged, noted in `refusals`). The last replay
        of each game is kept and carried on from, so a state costs only its new events."""
        kept = self._replays.pop(game, None)
        start = 0
        if kept is not None and kept[0] == settings and joined.startswith(kept[1]):
            replayed, start = kept[2], len(kept[1]) // 4
        elif (kept is not None and kept[0] == settings and kept[1].startswith(joined)
              and len(kept[1]) - len(joined) <= 64):
            replayed, start = kept[2], len(records)  # taken back: undo the rest
            for _ in range((len(kept[1]) - len(joined)) // 4):
                replayed.undo()
        else:
            replayed = Game(*settings)
        for number in range(start, len(records)):
            try:
                replayed.apply(records[number])
            except GameError as e:
                self._refused(game, number + 1, records[number], str(e))
                return None
        self._replays[game] = (settings, joined, replayed)
        while len(self._replays) > REPLAYS_KEPT:
            self._replays.pop(next(iter(self._replays)))
        return replayed

    def _refused(self, game, number, record, why):
        fresh = self.db.execute(
            "UPDATE events SET refused=1 WHERE game=? AND kind='event' AND number=? AND "
            "record=? AND refused=0", (game, number, bytes(record))).rowcount
        if fresh:
            self.refusals.append((game, number, why))

    def judge_open(self, game):
        """Judge again the game's open claims (missing or disputed) newer than its newest
        proven one, oldest first (the newest JUDGED_AGAIN): the events may have come, or
        been sent again. The final state is then the newest claim not disputed."""
        rows = self.db.execute(
            "SELECT id, packed, history, history_crc, verdict FROM states WHERE game=? AND "
            "verdict IN ('missing', 'disputed') AND rank > COALESCE((SELECT MAX(rank) FROM "
            "states WHERE game=? AND verdict='proven'), -1) ORDER BY rank DESC LIMIT ?",
            (game, game, JUDGED_AGAIN)).fetchall()
        if not rows:
            return
        held = self._held_now(game)
        changed = False
        for row, packed, count, crc, before in reversed(rows):
            verdict = self._judge(game, packed, count, crc, held)
            if verdict != before:
                changed = True
                self.db.execute("UPDATE states SET verdict=? WHERE id=?", (verdict, row))
        if not changed:
            return
        self.moved_final = game
        newest = self.db.execute(
            "SELECT id FROM states WHERE game=? AND verdict IN ('proven', 'missing') "
            "ORDER BY rank DESC LIMIT 1", (game,)).fetchone()
        if newest is not None:
            self._make_final(game, newest[0])
        else:
            self.db.execute("UPDATE games SET final=NULL, packed=NULL, final_rank=NULL, "
                            "history=NULL, history_crc=NULL, complete=0 WHERE id=?", (game,))

    def newest_claim(self, game):
        """(history, history_crc, verdict) of the game's newest claim that is not stale:
        what the board says it holds now."""
        return self.db.execute(
            "SELECT history, history_crc, verdict FROM states WHERE game=? AND "
            "verdict IN ('proven', 'missing', 'disputed') ORDER BY rank DESC LIMIT 1",
            (game,)).fetchone()

    def disputed(self, game):
        """How many of the game's claims the stored events do not give (0 in a version 2
        file, whose claims were never judged)."""
        if self.version < 3:
            return 0
        return self.db.execute("SELECT COUNT(*) FROM states WHERE game=? AND "
                               "verdict='disputed'", (game,)).fetchone()[0]

    def history(self, game):
        """The records the game's final state counts, as far as they are held: a list with
        None where an event is missing."""
        row = self.db.execute("SELECT history FROM games WHERE id=?", (game,)).fetchone()
        count = row[0] if row and row[0] is not None else 0
        held = self._held(game)[:count]
        return held + [None] * (count - len(held))

    def lost_events(self, game):
        """The records stored beyond what the board's final state counts, when the board
        holds a prefix of what is stored (its count and CRC match the first records): the
        events a board that came back short has lost. [] when nothing is lost."""
        row = self.db.execute("SELECT history, history_crc FROM games WHERE id=?",
                              (game,)).fetchone()
        if row is None or row[0] is None:
            return []
        count = row[0]
        held = self._held(game)
        if len(held) <= count or None in held:
            return []
        prefix = b"".join(held[:count])
        if (zlib.crc32(prefix) if prefix else 0) != row[1]:
            return []  # the board holds another story than the one stored: not a prefix
        return held[count:]

    def loss(self, game, board_events, stored_events):
        """Note that the board came back with fewer events than are stored (a row; nothing
        is deleted)."""
        self.db.execute("INSERT INTO losses (game, board_events, stored_events, received) "
                        "VALUES (?,?,?,?)", (game, board_events, stored_events, time.time()))

    def losses(self, game):
        return self.db.execute("SELECT COUNT(*) FROM losses WHERE game=?",
                               (game,)).fetchone()[0]

    def _held(self, game):
        """Every record stored for the game in the board's order, undos applied."""
        rows = self.db.execute(
            "SELECT kind, number, record, resent FROM events WHERE game=? ORDER BY rank",
            (game,)).fetchall()
        return _apply_rows([], rows)

    def _held_now(self, game):
        """_held(), carried on from the last call for the game when the rows added since
        all come after it in the board's order (the usual case: each state costs its new
        events, not the game's). Rows are only ever added, so the count and the highest
        rank tell whether any came; another writer's rows and rolled-back ones included."""
        count, top = self.db.execute("SELECT COUNT(*), MAX(rank) FROM events WHERE game=?",
                                     (game,)).fetchone()
        kept = self._held_kept.pop(game, None)
        if kept is not None and kept[0] == count and kept[1] == top:
            held = kept[2]
        elif kept is not None and count > kept[0] and kept[1] is not None:
            rows = self.db.execute("SELECT kind, number, record, resent FROM events WHERE "
                                   "game=? AND rank > ? ORDER BY rank",
                                   (game, kept[1])).fetchall()
            held = (_apply_rows(kept[2], rows) if len(rows) == count - kept[0]
                    else self._held(game))
        else:
            held = self._held(game)
        self._held_kept[game] = (count, top, held)
        while len(self._held_kept) > REPLAYS_KEPT:
            self._held_kept.pop(next(iter(self._held_kept)))
        return list(held)

    def check_history(self, game):
        """Judge the game's open claims again (judge_open) and keep `complete` (its final
        state proven); returns the numbers (1 = first) of the events to ask the board for,
        by what its newest claim counts: [] when the logger holds them all. When all are
        held but their CRC is not the claim's, every one is asked for again."""
        self.judge_open(game)
        row = self.db.execute("SELECT history, complete FROM games WHERE id=?",
                              (game,)).fetchone()
        claim = self.newest_claim(game)
        if row is None or claim is None:
            return []
        if claim[2] == "proven":
            return []
        count, crc, _ = claim
        held = self._held_now(game)[:count]
        held += [None] * (count - len(held))
        missing = [n + 1 for n, record in enumerate(held) if record is None]
        if missing:
            return missing
        if zlib.crc32(b"".join(held)) != crc:
            return list(range(len(held), 0, -1))  # all held, one is wrong: ask for them all
        return []

    def replay(self, game):
        """The final state the stored events alone give, or None without a final state or
        when an event it counts is missing (records the rules refuse are skipped)."""
        row = self.db.execute("SELECT packed FROM games WHERE id=?", (game,)).fetchone()
        if row is None or row[0] is None:
            return None
        records = self.history(game)
        if None in records:
            return None
        replayed = replay_all(row[0], records, [])
        return None if replayed is None else replayed.state()

    def flagged(self, game):
        """Numbers of the game's stored records the logger found the rules refuse."""
        if self.version < 3:
            return []
        return [row[0] for row in self.db.execute(
            "SELECT DISTINCT number FROM events WHERE game=? AND refused=1 ORDER BY number",
            (game,))]

    def frame_mark(self, port, nonce, counter, retired):
        """Where a board's current boot stands on the broker (its nonce and the highest
        counter taken), and the nonces of the boots it has left (docs/network.md)."""
        now = time.time()
        self.db.execute("INSERT OR REPLACE INTO frame_marks (port, nonce, counter, retired, "
                        "updated) VALUES (?,?,?,0,?)", (port, nonce, counter, now))
        for old in retired:
            self.db.execute("INSERT INTO frame_marks (port, nonce, counter, retired, updated) "
                            "VALUES (?,?,NULL,1,?) ON CONFLICT (port, nonce) DO UPDATE SET "
                            "retired=1", (port, old, now))

    def frame_marks(self, port):
        """[(nonce hex, counter, retired)] stored for a board's port."""
        if self.version < 3:
            return []
        return self.db.execute("SELECT nonce, counter, retired FROM frame_marks WHERE port=?",
                               (port,)).fetchall()

    def error(self, board, port, fields):
        self.db.execute(
            "INSERT INTO errors (board, port, code, ref, detail, received) VALUES (?,?,?,?,?,?)",
            (board, port, fields["code"], fields["ref"], fields["detail"], time.time()))

    def link_stats(self, port, board, connected, counters):
        values = [counters.get(name, 0) for name in LINK_COUNTERS]
        self.db.execute(
            "INSERT OR REPLACE INTO link_stats (port, board, connected, %s, updated) "
            "VALUES (?,?,?,%s,?)" % (", ".join(LINK_COUNTERS), ",".join("?" * len(values))),
            [port, board, int(connected), *values, time.time()])

    def final_rank(self, game):
        row = self.db.execute("SELECT final_rank FROM games WHERE id=?", (game,)).fetchone()
        return None if row is None else row[0]

    def final(self, game):
        row = self.db.execute("SELECT final FROM games WHERE id=?", (game,)).fetchone()
        return None if row is None or row[0] is None else json.loads(row[0])

    def games(self, game=None):
        sql = ("SELECT g.id, b.key, g.game_no, g.started, g.updated, g.final, g.game_id, "
               "g.complete FROM games g JOIN boards b ON b.id = g.board "
               "WHERE g.final IS NOT NULL")
        args = ()
        if game is not None:
            sql += " AND g.id=?"
            args = (game,)
        return self.db.execute(sql + " ORDER BY g.id", args).fetchall()

    def shots(self, game, refused=None):
        """The game's shots as its final state counts them (adjusts are not shots), each
        (number, player, points, to, record), replayed from the stored records; the
        numbers of records the rules refuse are appended to `refused` (skipped)."""
        shots, skipped, _ = self.final_replay(game)
        if refused is not None:
            refused += skipped
        return shots

    def final_replay(self, game):
        """The stored records its final state counts, replayed once (replay_steps):
        (shots as shots() gives them, numbers of the records the rules refuse, proven).
        `proven`: the records are exactly the ones the final state counts (their number
        and CRC-32), the rules take every one, and they replay to its very bytes: what
        `complete` in an export means, worked out from the file as it is."""
        row = self.db.execute("SELECT packed, history, history_crc FROM games WHERE id=?",
                              (game,)).fetchone()
        if row is None or row[0] is None:
            return [], [], False
        packed, count, crc = row
        records = self.history(game)
        refused, out = [], []
        shots = 0
        replayed = None
        for _, record, replayed in replay_steps(packed, records, refused):
            if replayed.shots != shots:
                shots = replayed.shots
                last = replayed.state()["last"]
                out.append((shots, last["player"], last["points"], last["to"], record))
        return out, refused, proven_by(packed, count, crc, records, refused, replayed)


def _apply_rows(held, rows):
    """Events rows (kind, number, record, resent), in rank order, applied to `held`
    (changed)."""
    for kind, number, record, resent in rows:
        # The board's own order: an event played at `number` replaces what stood there
        # and ends the list; an undo ends the list at `number`. An event sent again on
        # request is the board's record at that place and says nothing of what follows:
        # it fills its place only (the state's CRC shows whether the rest still holds).
        if kind == "undo":
            del held[number:]
            continue
        while len(held) < number - 1:
            held.append(None)
        if len(held) >= number and held[number - 1] == bytes(record):
            continue  # the same event again (a resend): nothing after it changes
        if resent and len(held) >= number:
            held[number - 1] = bytes(record)
            continue
        del held[number - 1:]
        held.append(bytes(record))
    return held


def replay_steps(packed, records, refused):
    """The stored records of a game through the rules core, from the settings its state
    `packed` names: yields (number, record, game) after each record the rules take (the
    game is one object, changed in place), 1 = first. A record the rules refuse is
    skipped, and its number appended to `refused`; a record not held (None) ends it: the
    rest cannot be replayed without it. Every export, statistic and page replays stored
    events through here, so no stored record can make one fail."""
    try:
        game = Game(*settings_of(bytes(packed)))
    except GameError:
        return
    for number, record in enumerate(records, 1):
        if record is None:
            return
        try:
            game.apply(record)
        except GameError:
            refused.append(number)
            continue
        yield number, record, game


def proven_by(packed, count, crc, records, refused, replayed):
    """True when `records` (as held, in order) are exactly the `count` records a state
    counts, with its CRC-32, the rules refused none (`refused`), and `replayed` (the game
    replay_steps() ended with; None if it yielded nothing) is that state, byte for byte."""
    if packed is None or None in records or refused or len(records) != count:
        return False
    joined = b"".join(records)
    if (zlib.crc32(joined) if joined else 0) != crc:
        return False
    replayed = replayed or replay_all(packed, [], [])
    return replayed is not None and pack_state(replayed) == bytes(packed)


def replay_all(packed, records, refused):
    """The game replay_steps() ends with (None when `packed` names no settings)."""
    try:
        replayed = Game(*settings_of(bytes(packed)))
    except GameError:
        return None
    for _, _, replayed in replay_steps(packed, records, refused):  # noqa: B007
        pass
    return replayed


def is_busy(error):
    text = str(error).lower()
    return "locked" in text or "busy" in text
