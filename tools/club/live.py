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
import time

from rules_core.settings import rules_name
from tools.records import Database
from tools.records.game import current_games

POLL_S = 0.25
GATHER_S = 0.05  # after a commit, wait this long for more before reading the tables
KEEPALIVE_S = 15.0
QUEUE = 8  # messages waiting for one slow client; the oldest go first

BREAK_SINCE = """
SELECT MIN(received) FROM states
WHERE game=? AND stale=0 AND json_extract(state, '$.status')='break'
  AND json_extract(state, '$.shots')=?
"""


def board_label(board):
    """How a table is called on the pages: its board id as text where the id is short
    printable text (T01, a simulated table), else as the logger stores it (hex)."""
    try:
        text = bytes.fromhex(board).decode("ascii")
    except (ValueError, UnicodeDecodeError):
        return board
    if 1 <= len(text) <= 12 and all(c.isalnum() or c in "-_" for c in text):
        return text
    return board


class Tables:
    """Reads every board's latest game with its names (tools.records.game.current_games),
    for the pages and the hub: one connection of its own, asked from the hub's threads."""

    def __init__(self, database):
        self.database = database
        self.db = database.read_connection()
        self._cache = {}  # board id -> ((game, final text, names), table dict)

    def data_version(self):
        return self.db.execute("PRAGMA data_version").fetchone()[0]

    def read(self):
        """[table dict], one per board, ordered by board id. A board whose latest game,
        state and names are as last time gives the same dict again (nothing parsed)."""
        out = []
        cache = {}
        for record in current_games(self.db):
            known = self._cache.get(record.board)
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
        return {"board": record.board, "label": board_label(record.board),
                "game": record.game, "game_no": record.game_no, "state": state,
                "rules_name": rules_name(state.get("rules")), "names": record.names,
                "updated": record.updated, "break_since": since}


class LiveHub:
    """Pushes the tables to every connected browser when the database changes."""

    def __init__(self, database, poll_s=POLL_S, gather_s=GATHER_S):
        self.database = database  # a Database, or the path of one (opened at start())
        self.poll_s = poll_s
        self.gather_s = gather_s
        self.tables = None
        self.current = {}  # board id -> table dict as last sent
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
            self.tables.db.close()

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
        version = await asyncio.to_thread(self.tables.data_version)
        if not force and version == self._version:
            return
        self._version = version
        tables = await asyncio.to_thread(self.tables.read)
        changed = []
        for table in tables:
            if self.current.get(table["board"]) is not table:
                self.current[table["board"]] = table
                changed.append(table)
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
                    yield b": keep-alive\n\n"
                    continue
                if message is None:
                    return
                yield message
        finally:
            self.clients.discard(queue)


def _event(name, data):
    return ("event: %s\ndata: %s\n\n" % (name, json.dumps(data, separators=(",", ":")))
            ).encode()
