"""The logger's SQLite database: boards, boots, games, events, states, errors, link counters.

    store = Store("games.db")                 # WAL mode; tables made when missing
    store = Store("games.db", create=False)   # export/stats/view: StoreError unless ours
    with store.transaction():                 # one read burst: all of it or nothing
        board = store.board("a1b2c3", "/dev/ttyUSB1", hello)
        rank = store.rank(board, boot_id, stamp)
        game = store.game(board, fields)      # by the game's own 8-byte identity
        store.event(game, fields, rank) ; store.undo(game, fields, rank)
        store.state(game, fields, rank)       # False: older than what is stored (stale)
    store.final(game)                         # the game's last board state, a dict
    store.history(game)                       # the event records its final state counts

Stored facts are only ever added: an undo is a row of its own, and no frame from the wire
deletes a row. A game's events, its final state and the verdict whether the events held
are exactly the ones the final state counts (count and CRC-32 from the board) change in
one transaction. Frames are ordered by the board's boot (in the order the logger first
saw it) and the frame's stamp within that boot; a state older than the stored one is kept
in `states` but never becomes the game's final state.
"""

import contextlib
import json
import os
import sqlite3
import time
import zlib

from rules_core import Game
from rules_core.savedstate import settings_of

APPLICATION_ID = 0x50494E42  # "PINB": this file is a pinboard logger database
SCHEMA_VERSION = 2

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
    UNIQUE (game, rank));
CREATE TABLE IF NOT EXISTS states (
    id INTEGER PRIMARY KEY, game INTEGER NOT NULL REFERENCES games(id), seq INTEGER,
    rank INTEGER, stale INTEGER NOT NULL DEFAULT 0, received REAL, state TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS errors (
    id INTEGER PRIMARY KEY, board INTEGER REFERENCES boards(id), port TEXT, code INTEGER,
    ref INTEGER, detail TEXT, received REAL);
CREATE TABLE IF NOT EXISTS link_stats (
    port TEXT PRIMARY KEY, board INTEGER REFERENCES boards(id), connected INTEGER,
    frames INTEGER, bad_frames INTEGER, noise_bytes INTEGER, gaps INTEGER,
    missing INTEGER, state_requests INTEGER, reconnects INTEGER,
    device_rx_frames INTEGER, device_rx_bad INTEGER, device_tx_frames INTEGER,
    replayed INTEGER, stale INTEGER, unknown_protocol INTEGER, events_requested INTEGER,
    db_busy INTEGER, updated REAL);
CREATE TABLE IF NOT EXISTS losses (
    id INTEGER PRIMARY KEY, game INTEGER NOT NULL REFERENCES games(id),
    board_events INTEGER, stored_events INTEGER, received REAL);
CREATE INDEX IF NOT EXISTS states_by_game ON states(game);
CREATE INDEX IF NOT EXISTS events_by_game ON events(game, number);
CREATE INDEX IF NOT EXISTS games_by_board ON games(board);
"""

TABLES = ("boards", "boots", "games", "events", "states", "errors", "link_stats", "losses")
LINK_COUNTERS = ("frames", "bad_frames", "noise_bytes", "gaps", "missing", "state_requests",
                 "reconnects", "device_rx_frames", "device_rx_bad", "device_tx_frames",
                 "replayed", "stale", "unknown_protocol", "events_requested", "db_busy")
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
    if version != SCHEMA_VERSION:
        raise StoreError("%s: logger database version %d; this logger reads version %d"
                         % (path, version, SCHEMA_VERSION))


def _uri_path(path):
    from urllib.parse import quote

    return quote(os.path.abspath(path))


class Store:
    def __init__(self, path, create=True):
        self.path = path
        self._boots = {}  # (board, boot_id) -> row id: rows are never deleted
        self._games = {}  # (board, game_id) -> row id
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
        except sqlite3.DatabaseError as e:
            raise StoreError("%s: %s" % (path, e)) from None

    def _setup(self):
        deadline = time.monotonic() + 30
        while True:
            try:
                self.db.execute("PRAGMA journal_mode=WAL")
                self.db.execute("PRAGMA synchronous=NORMAL")
                self.db.executescript(SCHEMA)
                self.db.execute("PRAGMA application_id=%d" % APPLICATION_ID)
                self.db.execute("PRAGMA user_version=%d" % SCHEMA_VERSION)
                return
            except sqlite3.OperationalError as e:
                if not is_busy(e) or time.monotonic() > deadline:
                    raise
                time.sleep(0.1)

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
        """Store a board state; True if it is now the game's final state (not stale)."""
        state = fields["state"]
        text = json.dumps(state, separators=(",", ":"))
        row = self.db.execute("SELECT final_rank FROM games WHERE id=?", (game,)).fetchone()
        stale = row[0] is not None and rank <= row[0]
        self.db.execute(
            "INSERT INTO states (game, seq, rank, stale, received, state) VALUES (?,?,?,?,?,?)",
            (game, seq, rank, int(stale), time.time(), text))
        if stale:
            return False
        winner = state.get("winner")
        self.db.execute(
            "UPDATE games SET rules=?, distance1=?, distance2=?, sets=?, status=?, winner=?, "
            "shots=?, final=?, packed=?, final_rank=?, history=?, history_crc=?, updated=? "
            "WHERE id=?",
            (state["rules"], state["distance"][0], state["distance"][1],
             state.get("best_of", 1), state["status"],
             None if winner is None else str(winner), state["shots"], text, fields["packed"],
             rank, fields["history"], fields["history_crc"], time.time(), game))
        return True

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
            "SELECT kind, number, record FROM events WHERE game=? ORDER BY rank",
            (game,)).fetchall()
        held = []
        for kind, number, record in rows:
            # The board's own order: an event at `number` replaces what stood there and
            # ends the list; an undo ends the list at `number`.
            if kind == "undo":
                del held[number:]
                continue
            while len(held) < number - 1:
                held.append(None)
            if len(held) >= number and held[number - 1] == bytes(record):
                continue  # the same event again (a resend): nothing after it changes
            del held[number - 1:]
            held.append(bytes(record))
        return held

    def check_history(self, game):
        """Mark the game complete if its held events are exactly those its final state
        counts; returns the numbers (1 = first) to ask the board for, [] when complete."""
        row = self.db.execute("SELECT history, history_crc, complete FROM games WHERE id=?",
                              (game,)).fetchone()
        if row is None or row[0] is None:
            return []
        if row[0] == 0:  # a game without events holds them all
            if not row[2]:
                self.db.execute("UPDATE games SET complete=1 WHERE id=?", (game,))
            return []
        held = self.history(game)
        missing = [n + 1 for n, record in enumerate(held) if record is None]
        complete = not missing and zlib.crc32(b"".join(held)) == row[1]
        self.db.execute("UPDATE games SET complete=? WHERE id=?", (int(complete), game))
        if complete or missing:
            return missing
        return list(range(len(held), 0, -1))  # all held, one is wrong: ask for them all

    def replay(self, game):
        """The final state the stored events alone give, or None without a final state."""
        row = self.db.execute("SELECT packed FROM games WHERE id=?", (game,)).fetchone()
        if row is None or row[0] is None:
            return None
        replayed = Game(*settings_of(bytes(row[0])))  # the final state's settings, fresh
        for record in self.history(game):
            if record is None:
                return None
            replayed.apply(record)
        return replayed.state()

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

    def shots(self, game):
        """The game's shots as its final state counts them (adjusts are not shots), each
        (number, player, points, to, record), replayed from the stored records."""
        row = self.db.execute("SELECT packed FROM games WHERE id=?", (game,)).fetchone()
        if row is None or row[0] is None:
            return []
        replayed = Game(*settings_of(bytes(row[0])))  # the final state's settings, fresh
        out = []
        for record in self.history(game):
            if record is None:
                break  # the rest cannot be replayed without it; the board is asked for it
            before = replayed.shots
            replayed.apply(record)
            if replayed.shots != before:
                last = replayed.state()["last"]
                out.append((replayed.shots, last["player"], last["points"], last["to"],
                            record))
        return out


def is_busy(error):
    text = str(error).lower()
    return "locked" in text or "busy" in text
