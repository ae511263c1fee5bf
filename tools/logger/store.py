"""What the logger writes: boards, boots, games, events, states (claims), errors, counters.

    store = Store("games.db")                 # the file (tools.records.Database) made
    store = Store(database)                   #   or brought up to date when needed
    with store.transaction():                 # one read burst: all of it or nothing
        board = store.board("a1b2c3", "/dev/ttyUSB1", hello)
        rank = store.rank(board, boot_id, stamp)
        game = store.game(board, fields)      # by the game's own 8-byte identity
        store.event(game, fields, rank) ; store.undo(game, fields, rank)
        store.state(game, fields, rank)       # its verdict: proven, missing, disputed, stale
    store.final(game)                         # the game's last believed board state, a dict
    store.history(game)                       # the event records its final state counts

The file, its tables and its connections are tools.records.database's; this is the
logger's side of it: the Store writes through the database's one writer, in the
transactions the logger makes. Reading games, replays, statistics and exports is
tools.records' (Records), for the logger's reports as for the club app.

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
import time
import zlib

from rules_core import Game, GameError
from rules_core.savedstate import settings_of
from rules_core.snapshot import pack_state
from tools.records import game as records_game
from tools.records.database import Database, is_busy  # noqa: F401 - the loop's busy test
from tools.records.replay import apply_rows, held_records

VERDICTS = ("proven", "missing", "disputed", "stale")
JUDGED_AGAIN = 8  # open claims judged again when a game's events change, newest first
REPLAYS_KEPT = 64  # games whose replayed state is kept between judgements
LINK_COUNTERS = ("frames", "bad_frames", "noise_bytes", "gaps", "missing", "state_requests",
                 "reconnects", "device_rx_frames", "device_rx_bad", "device_tx_frames",
                 "replayed", "stale", "unknown_protocol", "events_requested", "db_busy",
                 "silences", "no_key", "unsigned", "wrong_board", "repeated", "old_boot",
                 "disputed")


# A game's first claim of a verdict: looked for along the states' (game, rank) index from
# the game's start, where it is found at once. (One query that sorted all of the game's
# claims by verdict and rank made every state cost the whole game: a flood of 3,000 shots
# was stored at 3,000 frames a second instead of 6,000, docs/performance.md.)
FIRST_CLAIM = "SELECT packed FROM states WHERE game=? AND verdict=? ORDER BY rank LIMIT 1"


class Store:
    def __init__(self, path, create=True):
        """``path``: the database file, or a tools.records.Database to share."""
        self.database = path if isinstance(path, Database) else Database(path, create)
        self.path = self.database.path
        self.version = self.database.version
        self._boots = {}  # (board, boot_id) -> row id: rows are never deleted
        self._games = {}  # (board, game_id) -> row id
        self._replays = {}  # game -> (settings, records joined, Game replayed to them)
        self._held_kept = {}  # game -> (event rows, highest rank, records held)
        self.refusals = []  # (game, number, why) of records the rules refused, to be said
        self.moved_final = None  # a game whose final state judge_open() changed

    @property
    def db(self):
        """The database's writer connection (every statement of the logger's)."""
        return self.database.writer

    def close(self):
        self.database.close()

    @contextlib.contextmanager
    def transaction(self):
        try:
            with self.database.write():
                yield self
        except BaseException:
            self._boots.clear()  # a row made in the rolled-back transaction is gone
            self._games.clear()
            self.refusals.clear()  # noted again when the burst is stored again
            raise

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
        # the game's first proven claim, else its first open one
        first = (self.db.execute(FIRST_CLAIM, (game, "proven")).fetchone()
                 or self.db.execute(FIRST_CLAIM, (game, "missing")).fetchone())
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
        return records_game.history(self.db, game)

    def lost_events(self, game):
        """The records stored beyond what the board's final state counts, when the board
        holds a prefix of what is stored: the events a board that came back short has
        lost. [] when nothing is lost."""
        return records_game.lost_events(self.db, game)

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
        return held_records(self.db, game)

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
            held = (apply_rows(kept[2], rows) if len(rows) == count - kept[0]
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
