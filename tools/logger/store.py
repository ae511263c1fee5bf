"""The logger's SQLite database: boards, games, shots, states, errors and link statistics.

    store = Store("games.db")                 # WAL mode; tables made when missing
    with store.transaction():                 # one read burst: all of it or nothing
        board = store.board("a1b2c3", "/dev/ttyUSB1")
        game = store.state(board, game_no, state_dict, seq)
        store.shot(board, game_no, shot_dict)
    store.final(game)                         # the game's last board state, a dict

A game's row, its final state and its shots change in one transaction, so a reader (or a
crash) never sees half a game. Undone shots disappear when the state that follows the undo
is stored: a game keeps the shots its final state counts.
"""

import contextlib
import json
import os
import sqlite3
import time

SCHEMA = """
CREATE TABLE IF NOT EXISTS boards (
    id INTEGER PRIMARY KEY, key TEXT UNIQUE NOT NULL, port TEXT, firmware TEXT,
    protocol INTEGER, reset_cause TEXT, boots INTEGER NOT NULL DEFAULT 0,
    first_seen REAL, last_seen REAL);
CREATE TABLE IF NOT EXISTS games (
    id INTEGER PRIMARY KEY, board INTEGER NOT NULL REFERENCES boards(id),
    game_no INTEGER NOT NULL, rules TEXT, distance1 INTEGER, distance2 INTEGER,
    sets INTEGER, status TEXT, winner TEXT, shots INTEGER NOT NULL DEFAULT 0,
    final TEXT, started REAL, updated REAL);
CREATE TABLE IF NOT EXISTS shots (
    game INTEGER NOT NULL REFERENCES games(id), number INTEGER NOT NULL,
    player INTEGER, points INTEGER, to_player INTEGER, pins INTEGER, carom INTEGER,
    foul INTEGER, received REAL, PRIMARY KEY (game, number));
CREATE TABLE IF NOT EXISTS states (
    id INTEGER PRIMARY KEY, game INTEGER NOT NULL REFERENCES games(id), seq INTEGER,
    received REAL, state TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS errors (
    id INTEGER PRIMARY KEY, board INTEGER REFERENCES boards(id), port TEXT, code INTEGER,
    ref INTEGER, detail TEXT, received REAL);
CREATE TABLE IF NOT EXISTS link_stats (
    port TEXT PRIMARY KEY, board INTEGER REFERENCES boards(id), connected INTEGER,
    frames INTEGER, bad_frames INTEGER, noise_bytes INTEGER, gaps INTEGER,
    missing INTEGER, state_requests INTEGER, reconnects INTEGER,
    device_rx_frames INTEGER, device_rx_bad INTEGER, device_tx_frames INTEGER,
    updated REAL);
CREATE INDEX IF NOT EXISTS states_by_game ON states(game);
CREATE INDEX IF NOT EXISTS games_by_board ON games(board);
"""

TABLES = ("boards", "games", "shots", "states", "errors", "link_stats")
LINK_COUNTERS = ("frames", "bad_frames", "noise_bytes", "gaps", "missing", "state_requests",
                 "reconnects", "device_rx_frames", "device_rx_bad", "device_tx_frames")


class Store:
    def __init__(self, path):
        self.path = path
        folder = os.path.dirname(os.path.abspath(path))
        os.makedirs(folder, exist_ok=True)  # e.g. ~/.pinboard on a first `make sim`
        self.db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.execute("PRAGMA busy_timeout=5000")
        self.db.executescript(SCHEMA)

    def close(self):
        self.db.close()

    @contextlib.contextmanager
    def transaction(self):
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield self
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

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
                "UPDATE boards SET firmware=?, protocol=?, reset_cause=?, boots=boots+1 "
                "WHERE id=?",
                (hello["firmware"], hello["protocol"], hello["reset_cause"], board))
        return board

    def _current_game(self, board):
        return self.db.execute(
            "SELECT id, game_no, rules, distance1, distance2, sets, status FROM games "
            "WHERE board=? ORDER BY id DESC LIMIT 1", (board,)).fetchone()

    def _new_game(self, board, game_no):
        now = time.time()
        return self.db.execute(
            "INSERT INTO games (board, game_no, started, updated) VALUES (?,?,?,?)",
            (board, game_no, now, now)).lastrowid

    def state(self, board, game_no, state, seq=None):
        """Store a board state; returns the game's row id (a new game when it is one)."""
        current = self._current_game(board)
        settings = (state["rules"], state["distance"][0], state["distance"][1])
        if current is None or current[1] != game_no:
            game = self._new_game(board, game_no)
        elif current[2] is not None and (
                tuple(current[2:5]) != settings
                or (current[6] == "finished" and state["shots"] == 0
                    and state["status"] != "finished")):
            # Same game number but other settings, or a fresh start after a finished game:
            # the board began a new game without numbering it.
            game = self._new_game(board, game_no)
        else:
            game = current[0]
        text = json.dumps(state, separators=(",", ":"))
        winner = state.get("winner")
        self.db.execute(
            "UPDATE games SET rules=?, distance1=?, distance2=?, status=?, winner=?, shots=?, "
            "final=?, updated=? WHERE id=?",
            (settings[0], settings[1], settings[2], state["status"],
             None if winner is None else str(winner), state["shots"], text, time.time(),
             game))
        self.db.execute("DELETE FROM shots WHERE game=? AND number>?", (game, state["shots"]))
        self.db.execute("INSERT INTO states (game, seq, received, state) VALUES (?,?,?,?)",
                        (game, seq, time.time(), text))
        return game

    def shot(self, board, game_no, shot):
        current = self._current_game(board)
        if current is None or current[1] != game_no:
            game = self._new_game(board, game_no)
        else:
            game = current[0]
        self.db.execute(
            "INSERT OR REPLACE INTO shots (game, number, player, points, to_player, pins, "
            "carom, foul, received) VALUES (?,?,?,?,?,?,?,?,?)",
            (game, shot["number"], shot["player"], shot["points"], shot["to"], shot["pins"],
             shot["carom"], shot["foul"], time.time()))
        return game

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

    def final(self, game):
        row = self.db.execute("SELECT final FROM games WHERE id=?", (game,)).fetchone()
        return None if row is None or row[0] is None else json.loads(row[0])

    def games(self, game=None):
        sql = ("SELECT g.id, b.key, g.game_no, g.started, g.updated, g.final FROM games g "
               "JOIN boards b ON b.id = g.board WHERE g.final IS NOT NULL")
        args = ()
        if game is not None:
            sql += " AND g.id=?"
            args = (game,)
        return self.db.execute(sql + " ORDER BY g.id", args).fetchall()

    def shots(self, game):
        return self.db.execute(
            "SELECT number, player, points, to_player, pins, carom, foul FROM shots "
            "WHERE game=? ORDER BY number", (game,)).fetchall()
