"""Holding every game whole: the logger asks a board for the events it lacks, tells it which
games it holds (the board may let them go), and hands lost events back when asked to.

A part of tools.logger.core.Logger (its base class), kept apart because it is one concern:
it uses the Logger's store, send(), say() and retry times, and each board's Port.
"""

import sqlite3
import time

from tools.logger import frames
from tools.logger.store import is_busy

MAX_REQUESTS = 16  # events asked for at once


class History:
    def _tell_lost(self, port, game, count, records):
        if not records:
            if game in port.restoring:
                port.restoring.discard(game)
                self.say("%s: game %d: every lost event is back on the board"
                         % (port.path, game))
            return
        if game not in port.restoring:
            self.say("%s: game %d came back from the board with %d events; %d stored here "
                     "are missing on the board (kept; %s)" % (
                         port.path, game, count, count + len(records),
                         "handing them back" if self.restore_lost else
                         "--restore-lost hands them back"))
        if not self.restore_lost or port.serial is None:
            return
        port.restoring.add(game)
        now = time.monotonic()
        if now - port.restore_sent.get((game, count + 1), -1e9) < self.event_retry_s:
            return  # asked already (a second STATE of the same count)
        port.restore_sent[(game, count + 1)] = now
        row = self.store.db.execute("SELECT game_id FROM games WHERE id=?", (game,)).fetchone()
        # One at a time: the board takes only its next event, and its STATE after each
        # one brings the next.
        self.send(port, frames.CMD_RESTORE,
                  frames.restore_args(bytes.fromhex(row[0]), count + 1, records[0]))

    def _recheck(self, port):
        """Ask again for what an incomplete game still lacks (the answer may have been lost)."""
        now = time.monotonic()
        due = [g for g, at in port.incomplete.items() if now - at >= self.event_retry_s]
        if not due:
            return
        try:
            with self.store.transaction():
                wanted = [(game, self.store.check_history(game)) for game in due]
        except sqlite3.OperationalError as e:
            if not is_busy(e):
                raise
            return
        for game, missing in wanted:
            port.incomplete[game] = now
            self._note_complete(port, game, missing)
            if missing:
                self._ask_events(port, game, missing)

    def _note_complete(self, port, game, missing):
        if missing:
            if game not in port.given_up:
                port.incomplete.setdefault(game, time.monotonic())
            return
        port.incomplete.pop(game, None)
        claim = self.store.newest_claim(game)
        if claim is None or claim[2] != "proven":
            return  # nothing to ask for, yet the board's word is not proven: it keeps it
        if game != port.current_game and game not in port.logged and port.serial is not None:
            # A game the board has left, held whole: the board may let its copy go.
            port.logged.add(game)
            row = self.store.db.execute("SELECT game_id FROM games WHERE id=?",
                                        (game,)).fetchone()
            self.send(port, frames.CMD_LOGGED, bytes.fromhex(row[0]))

    def _ask_events(self, port, game, numbers):
        if game is None:
            self._ask_hello(port)
            return
        if port.serial is None:
            return
        now = time.monotonic()
        row = self.store.db.execute("SELECT game_id FROM games WHERE id=?", (game,)).fetchone()
        asked = 0
        for number in numbers:
            key = (game, number)
            if now - port.events_asked_at.get(key, -1e9) < self.event_retry_s:
                continue
            port.events_asked_at[key] = now
            port.counters["events_requested"] += 1
            seq = self.send(port, frames.CMD_EVENT,
                            frames.event_args(bytes.fromhex(row[0]), number))
            port.event_requests[seq] = game
            if len(port.event_requests) > 1000:
                port.event_requests.pop(next(iter(port.event_requests)))
            asked += 1
            if asked >= MAX_REQUESTS:
                break
