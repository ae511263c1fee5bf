"""The live tables: what every board shows now, and the server-sent events that push it.

    hub = LiveHub("games.db")
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

POLL_S = 0.25
GATHER_S = 0.05  # after a commit, wait this long for more before reading the tables
KEEPALIVE_S = 15.0
QUEUE = 8  # messages waiting for one slow client; the oldest go first

# Each board's latest game: the one whose state the board sent last in its own order (the
# same choice as tools.club.store's current_games(), used instead when it is there).
LATEST = """
SELECT b.key, g.id, g.game_no, g.final, g.updated
FROM boards b JOIN games g ON g.id = (
    SELECT g2.id FROM games g2 WHERE g2.board = b.id AND g2.final IS NOT NULL
    ORDER BY g2.final_rank DESC LIMIT 1)
ORDER BY b.key
"""

BREAK_SINCE = """
SELECT MIN(received) FROM states
WHERE game=? AND stale=0 AND json_extract(state, '$.status')='break'
  AND json_extract(state, '$.shots')=?
"""


def connect(db_path):
    """A read-only connection for the web side (the logger's file must exist)."""
    db = sqlite3.connect("file:%s?mode=ro" % _quote(db_path), uri=True,
                         check_same_thread=False)
    db.execute("PRAGMA busy_timeout=1000")
    return db


def _quote(path):
    import os
    from urllib.parse import quote

    return quote(os.path.abspath(path))


def board_label(key):
    """How a table is called on the pages: its board id as text where the id is short
    printable text (T01, a simulated table), else as the logger keys it (hex)."""
    try:
        text = bytes.fromhex(key).decode("ascii")
    except (ValueError, UnicodeDecodeError):
        return key
    if 1 <= len(text) <= 12 and all(c.isalnum() or c in "-_" for c in text):
        return text
    return key


def _club_store(db_path):
    """The club's own store (names at the tables) where that part is there, else None."""
    try:
        from tools.club.store import ClubStore
    except ImportError:
        return None
    try:
        return ClubStore(db_path)
    except Exception:  # noqa: BLE001  (no names is better than no tables)
        return None


class Tables:
    """Reads every board's latest game with its names, for the pages and the hub."""

    def __init__(self, db_path):
        self.db_path = db_path
        self.db = connect(db_path)
        self._club = _club_store(db_path)
        self._cache = {}  # board key -> ((game, final text, names), table dict)

    def close(self):
        self.db.close()
        if self._club is not None and hasattr(self._club, "close"):
            self._club.close()

    def data_version(self):
        return self.db.execute("PRAGMA data_version").fetchone()[0]

    def read(self):
        """[table dict], one per board, ordered by board key. A board whose latest game,
        state and names are as last time gives the same dict again (nothing parsed)."""
        out = []
        cache = {}
        for key, game, game_no, final, updated, names in self._latest():
            names = list(names or (None, None))
            known = self._cache.get(key)
            if known is not None and known[0] == (game, final, names):
                table = known[1]
            else:
                table = self._table(key, game, game_no, final, updated, names)
            cache[key] = ((game, final, names), table)
            out.append(table)
        self._cache = cache
        return out

    def _table(self, key, game, game_no, final, updated, names):
        state = json.loads(final) if isinstance(final, str) else final
        since = None
        if state.get("status") == "break":
            since = self.db.execute(BREAK_SINCE, (game, state["shots"])).fetchone()[0]
        return {"board": key, "label": board_label(key), "game": game, "game_no": game_no,
                "state": state,
                "names": names, "updated": updated, "break_since": since}

    def _latest(self):
        if self._club is not None:
            try:
                return [(row["board"], row["game"], row["game_no"], row["state"],
                         row["updated"], row.get("names")) for row in self._club.current_games()]
            except (sqlite3.Error, KeyError, TypeError):
                pass  # the tables without names are better than none
        return [row + (None,) for row in self.db.execute(LATEST)]


class LiveHub:
    """Pushes the tables to every connected browser when the database changes."""

    def __init__(self, db_path, poll_s=POLL_S, gather_s=GATHER_S):
        self.db_path = db_path
        self.poll_s = poll_s
        self.gather_s = gather_s
        self.tables = None
        self.current = {}  # board key -> table dict as last sent
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
        self.tables = Tables(self.db_path)
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
            self.tables.close()

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
