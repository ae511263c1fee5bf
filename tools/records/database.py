"""The pinboard database file: its tables, and every connection to it.

    db = Database("games.db")                  # made and brought up to date when needed
    db = Database("games.db", create=False)    # only an existing file of ours; unchanged
    db.make_club_tables()                      # the club's tables (names, totals, PIN tries)
    with db.write() as con:                    # the one writer: a lock, BEGIN IMMEDIATE
        con.execute("INSERT ...")              # COMMIT at the end, ROLLBACK on an error
    db.reader().execute("SELECT ...")          # this thread's read-only connection
    db.read_connection()                       # one of its own (the live tables' poll)
    db.close()                                 # every connection it made

One file holds what the logger stores (boards, boots, games, events, states, errors, link
counters, losses, frame marks: SCHEMA) and what the club app adds (players' names at the
tables, worked-out totals, the PIN's strikes: CLUB_SCHEMA, made by the club app on first
use, so that an older logger still reads the file and an export never makes them). The
file says it is ours (PRAGMA application_id) and which version (PRAGMA user_version); a
file of another program is refused before anything is written to it.

Connections are made here and nowhere else, as datasette's Database does: one writer per
process (`writer`, used by whoever writes: the logger's store, the club's names) whose
transactions a lock keeps whole when several threads write, and a pool of read-only
connections, one per thread (`reader()`), for the pages, the live tables and the exports.
The file is in WAL mode, so reading never waits for the writer.
"""

import contextlib
import os
import sqlite3
import threading
import time
from urllib.parse import quote

APPLICATION_ID = 0x50494E42  # "PINB": this file is a pinboard database
SCHEMA_VERSION = 3
# Version 2 lacks the claims' verdicts, refused records and frame marks: read as it is,
# and brought to version 3 in place when a logger or the club app opens it to write.
READABLE = (2, 3)
BUSY_TIMEOUT_MS = 200  # the logger's: it keeps reading its ports while it waits
READ_BUSY_MS = 1000

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

# The club app's tables: names at the tables (club_players, club_seats, and every change
# in club_name_log), each game's worked-out totals (tools.records.stats) and the strikes
# of wrong PINs (tools.club.security).
CLUB_SCHEMA = """
CREATE TABLE IF NOT EXISTS club_players (
    id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE COLLATE NOCASE, created REAL,
    fold TEXT);
CREATE TABLE IF NOT EXISTS club_seats (
    game INTEGER NOT NULL REFERENCES games(id),
    slot INTEGER NOT NULL CHECK (slot IN (1, 2)),
    player INTEGER NOT NULL REFERENCES club_players(id), named REAL,
    PRIMARY KEY (game, slot));
CREATE TABLE IF NOT EXISTS club_name_log (
    id INTEGER PRIMARY KEY, game INTEGER, slot INTEGER, before TEXT, after TEXT, at REAL);
CREATE TABLE IF NOT EXISTS club_game_totals (
    game INTEGER PRIMARY KEY REFERENCES games(id), final_rank INTEGER NOT NULL,
    points1 INTEGER, points2 INTEGER, innings1 INTEGER, innings2 INTEGER,
    high1 INTEGER, high2 INTEGER);
CREATE TABLE IF NOT EXISTS club_pin_tries (
    id INTEGER PRIMARY KEY CHECK (id = 1), strikes INTEGER NOT NULL, last REAL NOT NULL,
    until REAL NOT NULL);
CREATE INDEX IF NOT EXISTS club_seats_by_player ON club_seats(player);
CREATE INDEX IF NOT EXISTS club_games_by_board_rank ON games(board, final_rank);
CREATE INDEX IF NOT EXISTS club_games_by_started ON games(started, final_rank);
"""

TABLES = ("boards", "boots", "games", "events", "states", "errors", "link_stats", "losses",
          "frame_marks")


class StoreError(Exception):
    """A database that must not be used (missing, not SQLite, another program's)."""


def is_busy(error):
    """True for SQLite's "database is locked" and "busy": another program writes."""
    text = str(error).lower()
    return "locked" in text or "busy" in text


def check_ours(path):
    """Refuse, without changing anything, a file that is not a pinboard database."""
    if not os.path.exists(path):
        raise StoreError("%s: no such database" % path)
    if os.path.isdir(path):
        raise StoreError("%s: is a folder, not a database" % path)
    try:
        db = sqlite3.connect(_read_only_uri(path), uri=True)
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


def _read_only_uri(path):
    return "file:%s?mode=ro" % quote(os.path.abspath(path))


def retry_busy(work, seconds=30.0):
    """Run work() again while another program holds the file locked, for up to seconds."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            return work()
        except sqlite3.OperationalError as e:
            if not is_busy(e) or time.monotonic() > deadline:
                raise
            time.sleep(0.1)


class Database:
    def __init__(self, path, create=True):
        self.path = path
        self.create = create
        self._writer = None
        self.lock = threading.RLock()  # one transaction of the writer at a time
        self._local = threading.local()
        self._readers = []
        self._readers_lock = threading.Lock()
        if not create or (os.path.exists(path) and os.path.getsize(path) > 0):
            check_ours(path)
        else:
            os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        try:
            if create:
                retry_busy(self._set_up)
            self.version = self.reader().execute("PRAGMA user_version").fetchone()[0]
        except sqlite3.DatabaseError as e:
            self.close()
            raise StoreError("%s: %s" % (path, e)) from None

    # -- connections ------------------------------------------------------------------------

    @property
    def writer(self):
        """The process's one read-write connection (autocommit; write() makes transactions)."""
        if self._writer is None:
            with self.lock:
                if self._writer is None:
                    con = sqlite3.connect(self.path, isolation_level=None,
                                          check_same_thread=False)
                    con.execute("PRAGMA busy_timeout=%d" % BUSY_TIMEOUT_MS)
                    self._writer = con
        return self._writer

    @contextlib.contextmanager
    def write(self, busy_ms=None):
        """One transaction of the writer (BEGIN IMMEDIATE ... COMMIT, ROLLBACK on any
        error), held whole against the other threads' writes. ``busy_ms``: how long it
        waits for another program's write (default BUSY_TIMEOUT_MS)."""
        with self.lock:
            con = self.writer
            if busy_ms is not None:
                con.execute("PRAGMA busy_timeout=%d" % busy_ms)
            try:
                con.execute("BEGIN IMMEDIATE")
                try:
                    yield con
                except BaseException:
                    con.execute("ROLLBACK")
                    raise
                con.execute("COMMIT")
            finally:
                if busy_ms is not None:
                    con.execute("PRAGMA busy_timeout=%d" % BUSY_TIMEOUT_MS)

    def reader(self):
        """This thread's read-only connection (made on first use)."""
        con = getattr(self._local, "reader", None)
        if con is None:
            con = self._local.reader = self.read_connection()
        return con

    def read_connection(self):
        """A read-only connection of its own (closed with the others by close()), for a
        reader that must ask one connection each time: PRAGMA data_version counts the
        changes other connections made, per connection."""
        con = sqlite3.connect(_read_only_uri(self.path), uri=True, check_same_thread=False)
        con.execute("PRAGMA busy_timeout=%d" % READ_BUSY_MS)
        with self._readers_lock:
            self._readers.append(con)
        return con

    def close(self):
        with self._readers_lock:
            for con in self._readers:
                con.close()
            self._readers = []
        self._local = threading.local()
        if self._writer is not None:
            self._writer.close()
            self._writer = None

    # -- the tables -------------------------------------------------------------------------

    def has_table(self, name):
        return self.reader().execute("SELECT 1 FROM sqlite_master WHERE type='table' AND "
                                     "name=?", (name,)).fetchone() is not None

    def _set_up(self):
        con = self.writer
        con.execute("PRAGMA journal_mode=WAL")
        con.execute("PRAGMA synchronous=NORMAL")
        con.executescript(SCHEMA)
        for table, column, kind in ADDED_COLUMNS:
            # version 2's tables gain version 3's columns (the claims stored before have
            # no verdict, and are never judged again)
            have = {row[1] for row in con.execute("PRAGMA table_info(%s)" % table)}
            if column not in have:
                con.execute("ALTER TABLE %s ADD COLUMN %s %s" % (table, column, kind))
        con.executescript(INDEXES)
        con.execute("PRAGMA application_id=%d" % APPLICATION_ID)
        con.execute("PRAGMA user_version=%d" % SCHEMA_VERSION)

    def make_club_tables(self):
        """The club app's tables, made where they are missing (the file must exist), and
        every player's name given its key (tools.records.names.fold_names)."""
        from tools.records.names import fold_names

        def make():
            with self.lock:  # executescript commits: never inside another's transaction
                self.writer.executescript(CLUB_SCHEMA)
                fold_names(self)

        retry_busy(make)
