"""The live tables: what every board shows now, and the server-sent events that push it.

    hub = LiveHub(database)           # a tools.records.Database (or a file's path)
    await hub.start()                 # in the web server's event loop
    hub.notify()                      # from any thread: the logger committed a frame
    async for chunk in hub.stream():  # one browser's /events: every table, then changes
        ...
    await hub.stop()

The logger runs in the same process and calls notify() after each commit; a cheap poll of
SQLite's `PRAGMA data_version` (every POLL_S) also catches what another process wrote (a
logger started on its own, names set by another worker). On a change the hub reads each
board's latest game once and sends only the tables that changed, as one `tables` event to
every client; a client that reads too slowly loses the older messages, never the newest.
"""

import asyncio
import json
import sqlite3
import threading
import time

from rules_core.settings import PAST, SETS, has, rules_name
from tools.linkcodes import ERR_ASKED
from tools.records import Database
from tools.records.game import current_games, history, table_label
from tools.records.names import follow_table
from tools.records.replay import Replay

POLL_S = 0.25
GATHER_S = 0.05  # after a commit, wait this long for more before reading the tables
KEEPALIVE_S = 15.0  # a `ping` event this often: a page that hears nothing for longer knows
PENDING_S = 120.0  # a new game waits this long for the players' ok on the board
QUEUE = 8  # messages waiting for one slow client; the oldest go first

BREAK_SINCE = """
SELECT MIN(received) FROM states
WHERE game=? AND stale=0 AND json_extract(state, '$.status')='break'
  AND json_extract(state, '$.shots')=?
"""


class Tables:
    """Reads every board's latest game with its names (tools.records.game.current_games),
    for the pages and the hub: one connection of its own, asked from the hub's threads."""

    def __init__(self, database):
        self.database = database
        self.db = database.read_connection()
        self._cache = {}  # board id -> ((game, final text, names), table dict)
        self._sets = {}  # game -> (sets decided, [set results]) of matches in sets
        # One call on the connection at a time, and close() after the last: a call still
        # running in its thread when the hub stopped (its task cancelled, not the thread)
        # found the connection closed under it, and SQLite crashed the whole process.
        self._using = threading.Lock()

    def data_version(self):
        with self._using:
            if self.db is None:
                return None
            return self.db.execute("PRAGMA data_version").fetchone()[0]

    def close(self):
        """Close the connection once no call is using it; later calls read nothing."""
        with self._using:
            if self.db is not None:
                self.db.close()
                self.db = None

    def read(self):
        """[table dict], one per board, ordered by board id. A board whose latest game,
        state and names are as last time gives the same dict again (nothing parsed)."""
        with self._using:
            if self.db is None:
                return []
            return self._read()

    def _read(self):
        out = []
        cache = {}
        for record in current_games(self.db):
            known = self._cache.get(record.board)
            if record.names == [None, None] and (known is None or known[0][0] != record.game):
                record.names = self._follow(record.game)
            seen = (record.game, record.final_text, record.names)
            if known is not None and known[0] == seen:
                table = known[1]
            else:
                table = self._table(record)
            cache[record.board] = (seen, table)
            out.append(table)
        self._cache = cache
        return out

    def _table(self, record):
        state = record.final
        since = None
        if state.get("status") == "break":
            since = self.db.execute(BREAK_SINCE, (record.game, state["shots"])).fetchone()[0]
        return {"board": record.board, "label": table_label(record.board),
                "game": record.game, "game_no": record.game_no, "state": state,
                "rules_name": rules_name(state.get("rules")), "names": record.names,
                "updated": record.updated, "break_since": since,
                "set_results": self._set_results(record.game, state),
                "past": has(state.get("rules"), PAST)}

    def _follow(self, game):
        """A new game on a table takes the table's names (tools.records.names.follow_table:
        those given with the new game, else the game before's)."""
        try:
            return follow_table(self.database, game)
        except sqlite3.Error:
            return [None, None]  # the file is busy or read-only: unnamed, as before

    def _set_results(self, game, state):
        """The sets decided so far in a match of sets (their winning points, which the
        board's score no longer shows): replayed only when another set was decided."""
        if not has(state.get("rules"), SETS) or state.get("best_of", 1) <= 1:
            return None
        decided = sum(state.get("sets") or (0, 0))
        known = self._sets.get(game)
        if known is None or known[0] != decided:
            packed = self.db.execute("SELECT packed FROM games WHERE id=?", (game,)
                                     ).fetchone()[0]
            sets = Replay.of(packed, history(self.db, game)).sets
            known = (decided, sets)
            if len(sets) == decided:  # else an event is still on its way: again next time
                if len(self._sets) > 256:  # old matches go
                    self._sets = {}
                self._sets[game] = known
        return known[1]


class LiveHub:
    """Pushes the tables to every connected browser when the database changes."""

    def __init__(self, database, poll_s=POLL_S, gather_s=GATHER_S):
        self.database = database  # a Database, or the path of one (opened at start())
        self.poll_s = poll_s
        self.gather_s = gather_s
        self.tables = None
        self.current = {}  # board id -> table dict as last sent
        self.pending = {}  # board id -> a new game waiting for the board (see pend())
        self._shown = {}  # board id -> (table, pending, the two as one dict)
        self._tables = []
        self.clients = set()
        self.sent = 0  # messages put in clients' queues
        self.closing = False
        self._loop = None
        self._wake = None
        self._task = None
        self._version = None

    async def start(self):
        self._loop = asyncio.get_running_loop()
        self._wake = asyncio.Event()
        if not isinstance(self.database, Database):
            self.database = Database(self.database, create=False)
        self.tables = Tables(self.database)
        await self._refresh()
        self._task = asyncio.create_task(self._run())

    async def stop(self):
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass
        self._end_all()
        if self.tables is not None:
            # (in a thread: it waits for a call still running in one)
            await asyncio.to_thread(self.tables.close)

    def close_streams(self):
        """End every client's event stream (from any thread): the server is stopping, and
        it waits for open responses to end."""
        self.closing = True
        loop = self._loop
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(self._end_all)

    def _end_all(self):
        for queue in list(self.clients):
            if queue.full():
                queue.get_nowait()
            queue.put_nowait(None)

    def notify(self):
        """Something was committed (call from any thread)."""
        loop = self._loop
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(self._wake.set)

    def snapshot(self):
        return [self.current[key] for key in sorted(self.current)]

    def pend(self, board, settings, answer=None, wait_s=None):
        """A new game sent to ``board`` that waits for the board (the players' ok): shown
        with the table (`pending`) until the board starts a new game, refuses it
        (``answer()`` gives ("error", code)), or ``wait_s`` have passed. ``settings``: what
        the form asked for (rules, distance, sets, first, teams, names). Call on the
        event loop."""
        table = self.current.get(board)
        now = time.time()
        wait_s = PENDING_S if wait_s is None else wait_s
        self.pending[board] = {"since": now, "until": now + wait_s,
                               "game": table and table["game"], "answer": answer,
                               "shown": dict(settings, since=now, until=now + wait_s,
                                             rules_name=rules_name(settings.get("rules")))}
        self._wake.set()

    def _settle_pending(self):
        """Drop what no longer waits; True when something was dropped."""
        now = time.time()
        gone = []
        for board, waiting in self.pending.items():
            table = self.current.get(board)
            answer = waiting["answer"]() if waiting["answer"] else None
            refused = answer is not None and answer[0] == "error" and answer[1] != ERR_ASKED
            if now > waiting["until"] or (table and table["game"] != waiting["game"]) or refused:
                gone.append(board)
        for board in gone:
            del self.pending[board]
        return bool(gone)

    def _shown_table(self, table):
        """The table as the pages get it: with the new game that waits for it, if any
        (the same dict again while neither changed)."""
        waiting = self.pending.get(table["board"])
        if waiting is None:
            return table
        known = self._shown.get(table["board"])
        if known is not None and known[0] is table and known[1] is waiting:
            return known[2]
        shown = dict(table, pending=waiting["shown"])
        self._shown[table["board"]] = (table, waiting, shown)
        return shown

    async def _run(self):
        while True:
            try:
                await asyncio.wait_for(self._wake.wait(), self.poll_s)
                woken = True
            except asyncio.TimeoutError:
                woken = False
            if woken and self.gather_s:
                # Commits come in bursts (32 tables, a shot each a second): what comes in
                # the next moment goes out in the same event, one write per client.
                await asyncio.sleep(self.gather_s)
            self._wake.clear()
            try:
                await self._refresh(force=woken)
            except sqlite3.Error:
                await asyncio.sleep(self.poll_s)  # locked or mid-checkpoint: next round

    async def _refresh(self, force=True):
        if self.pending and self._settle_pending():
            force = True
        version = await asyncio.to_thread(self.tables.data_version)
        if force or version != self._version:
            self._version = version
            self._tables = await asyncio.to_thread(self.tables.read)
        changed = []
        for table in self._tables:
            shown = self._shown_table(table)
            if self.current.get(table["board"]) is not shown:
                self.current[table["board"]] = shown
                changed.append(shown)
        if changed:
            self._send(changed)

    def _send(self, changed):
        message = _event("tables", {"tables": changed, "now": time.time()})
        for queue in list(self.clients):
            if queue.full():
                queue.get_nowait()  # a slow client: drop its oldest message
            queue.put_nowait(message)
            self.sent += 1

    async def stream(self, first=True):
        """The bytes of one client's event stream: every table first, then the changes."""
        if self.closing:
            return
        queue = asyncio.Queue(QUEUE)
        self.clients.add(queue)
        try:
            yield b"retry: 1000\n\n"
            if first:
                yield _event("tables", {"tables": self.snapshot(), "now": time.time(),
                                        "all": True})
            while True:
                try:
                    message = await asyncio.wait_for(queue.get(), KEEPALIVE_S)
                except asyncio.TimeoutError:
                    # an event, not a comment: the page sees it and knows it still hears
                    yield _event("ping", {"now": time.time()})
                    continue
                if message is None:
                    return
                yield message
        finally:
            self.clients.discard(queue)


def _event(name, data):
    return ("event: %s\ndata: %s\n\n" % (name, json.dumps(data, separators=(",", ":")))
            ).encode()
