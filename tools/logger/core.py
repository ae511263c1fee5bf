"""The logger's loop: read every board's port, check frames, find gaps, store, reconnect.

    lg = Logger(["/dev/ttyUSB1"], "games.db")
    lg.run(stop_when=lambda lg: lg.latest_final() is not None, timeout=60)
    lg.close()

    # or in a thread:  threading.Thread(target=lg.run_forever).start(); ...
    # lg.last_state_equals(state) once stored; lg.stop()

When a port opens the logger asks the board who it is (CMD_HELLO) and for its state; the
frames that come before the answer wait for it, so a game is never filed under the port.
A sequence number that skips means frames were lost: the logger asks for the full state
(and asks again every second until one comes). A state whose events the logger does not
all hold makes it ask for the missing ones by number (CMD_EVENT). A sequence number from
the past is a replayed or repeated frame: counted, and kept only as history. A port that
fails is closed and reopened every half second, as when a USB adapter is unplugged and
plugged back in. What arrives is stored in one transaction per read burst; while another
program holds the database locked the frames wait in memory and are stored when it lets go.
"""

import select
import sqlite3
import sys
import threading
import time

import serial

from tools.logger import frames
from tools.logger.history import History
from tools.logger.port import Port
from tools.logger.store import Store, is_busy

REOPEN_S = 0.5
STATE_RETRY_S = 1.0
EVENT_RETRY_S = 0.5
HELLO_WAIT_S = 3.0  # frames wait this long for the board's hello, then go under the port
# A board sends a frame at least every 2 s (its heartbeat): a link quiet for longer was
# interrupted (a cable out, the board off the network), for however long; the first frame
# after it starts the count anew and brings a state request, whatever its number says.
SILENCE_S = 5.0
READ_MAX = 65536


class Logger(History):
    def __init__(self, ports, db, baud=115200, new_game=None, store=None,
                 state_retry_s=STATE_RETRY_S, replace=False, say=None,
                 event_retry_s=EVENT_RETRY_S, mqtt=None, restore_lost=False,
                 silence_s=SILENCE_S, new_game_board=None):
        if isinstance(ports, str) and not isinstance(db, str):
            ports, db = db, ports  # Logger(db, ports) reads as well; the order is obvious
        self.store = store or Store(db)
        self.last_state = None  # the newest committed board state, for other threads
        self._burst_state = None
        self._stop = threading.Event()
        self.state_retry_s = state_retry_s
        self.silence_s = silence_s
        self.event_retry_s = event_retry_s
        self.baud = baud
        # (rules, (d1, d2), sets, first[, teams]) sent once per port
        self.new_game = new_game
        self.replace = replace  # the new game may replace an unfinished one without asking
        # The board on the broker that new_game is for (its id): sent, signed, once its
        # boot's nonce is known, and again each second until it answers (a repeat with the
        # same sequence number is answered, never carried out twice).
        self.new_game_board = new_game_board
        self._new_game = None  # MQTT: [port, seq, wire, last sent, said sent, answered]
        self._new_game_wait = None
        self.say = say or (lambda text: None)  # messages for the person running the logger
        self.ports = [Port(path) for path in ports]
        self.last_game = None
        self.mqtt = mqtt  # a tools.logger.mqtt.MqttSource: every board on a broker
        self._followups = []
        self._short = []  # (game, board's count, lost records) seen in this burst
        self._disputed = []  # games that got a claim their stored events do not give
        # hand lost events back to a board that came back short (CMD_RESTORE); only
        # when the person running the logger asks for it
        self.restore_lost = restore_lost

    # -- public ---------------------------------------------------------------------------

    def run(self, stop_when=None, timeout=None, tick=None):
        """Log until ``stop_when(self)`` is true, ``timeout`` seconds pass (None: never) or
        stop() is called."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self._stop.is_set():
            self.step(0.05)
            if tick is not None:
                tick(self)
            if stop_when is not None and stop_when(self):
                return True
            if deadline is not None and time.monotonic() > deadline:
                return False
        return False

    def run_forever(self):
        """Log until stop() (for a thread; the simulator runs the logger so)."""
        self.run()

    def stop(self):
        self._stop.set()

    def last_state_equals(self, state):
        """True once ``state`` (a board-state dict) is the newest state stored."""
        return self.last_state == state

    def step(self, wait=0.05):
        """Reopen closed ports, wait up to ``wait`` s for data, store what came."""
        now = time.monotonic()
        for port in self.ports:
            if port.serial is None and now - port.last_open_try >= REOPEN_S:
                self._open(port, now)
        for port in self._all_ports():
            if port.serial is None:
                continue
            if port.state_wanted_at is not None and (
                    now - port.state_wanted_at >= self.state_retry_s):
                self._ask_state(port)
            if port.board is None and port.hello_asked_at is not None and (
                    now - port.hello_asked_at >= self.state_retry_s):
                self._ask_hello(port)
            if port.waiting and port.hello_asked_at is not None and (
                    now - port.waiting[0][0] >= HELLO_WAIT_S):
                # No hello: a board that does not answer CMD_HELLO is known by its port.
                self._set_board(port, port.path, None)
        live = [port for port in self.ports if port.serial is not None]
        fds = [port.serial.fileno() for port in live]
        if self.mqtt is not None:
            fds.append(self.mqtt.fileno())
        if not fds:
            time.sleep(wait)
        else:
            try:
                ready, _, _ = select.select(fds, [], [], wait)
            except (OSError, ValueError):
                ready = fds
            for port in live:
                if port.serial is not None and port.serial.fileno() in ready:
                    if self._read(port):
                        port.read_since_flush = True
            if self.mqtt is not None:
                self.mqtt.pump(self)  # its frames join each board's backlog, stored below
                if self.new_game_board is not None:
                    self._new_game_over_mqtt(time.monotonic())
        for port in self.ports:
            if port.backlog or port.read_since_flush:
                port.read_since_flush = not self._flush(port)
            elif port.incomplete and port.serial is not None:
                self._recheck(port)
        if self.mqtt is not None:
            boards = list(self.mqtt.boards.values())
            due = [port for port in boards if port.backlog or port.read_since_flush]
            if due:
                stored = self._flush_ports(due)
                for port in due:
                    port.read_since_flush = not stored
            for port in boards:
                if port not in due and port.incomplete and port.serial is not None:
                    self._recheck(port)

    def _all_ports(self):
        """The serial ports and the boards heard on the MQTT broker."""
        if self.mqtt is None:
            return self.ports
        return self.ports + list(self.mqtt.boards.values())

    def latest_final(self):
        return None if self.last_game is None else self.store.final(self.last_game)

    def send(self, port, kind, payload=b""):
        port.cmd_seq = (port.cmd_seq + 1) & 0xFFFF
        try:
            port.serial.write(frames.encode(kind, port.cmd_seq, payload))
        except (serial.SerialException, OSError):
            self._lost(port)
        return port.cmd_seq

    def close(self):
        self._stop.set()
        if self.mqtt is not None:
            self.mqtt.close()
            left = [port for port in self.mqtt.boards.values() if port.backlog]
            if left:
                self._flush_ports(left, wait_s=10.0)
        for port in self.ports:
            if port.backlog:
                self._flush(port, wait_s=10.0)
            if port.serial is not None:
                port.serial.close()
                port.serial = None
        self.store.close()

    # -- inside ---------------------------------------------------------------------------

    def _open(self, port, now):
        port.last_open_try = now
        try:
            port.serial = serial.Serial(port.path, self.baud, timeout=0)
        except (serial.SerialException, OSError, ValueError) as e:
            port.serial = None
            reason = str(e).split(":")[0] if isinstance(e, serial.SerialException) else str(e)
            if reason != port.open_error:
                port.open_error = reason
                self.say("%s: cannot open (%s); trying again every %.1f s"
                         % (port.path, reason, REOPEN_S))
            return
        if port.open_error is not None:
            self.say("%s: open" % port.path)
            port.open_error = None
        if port.opened_once:
            port.counters["reconnects"] += 1
        # The expected seq is kept: frames the board sent while the cable was out show up
        # as a gap (a reboot meanwhile sends a hello, which starts the count anew).
        self._ask_hello(port)
        self._ask_state(port)
        if self.new_game is not None and self.new_game_board is None and not port.opened_once:
            rules, distance, sets, first = self.new_game[:4]
            teams = self.new_game[4] if len(self.new_game) > 4 else 0
            self.send(port, frames.CMD_NEW_GAME, frames.new_game_args(
                rules, distance, sets, first, self.replace, teams))
        port.opened_once = True

    def _lost(self, port):
        try:
            port.serial.close()
        except (serial.SerialException, OSError):
            pass
        port.serial = None
        port.last_open_try = time.monotonic()

    def _ask_state(self, port):
        port.state_wanted_at = time.monotonic()
        port.counters["state_requests"] += 1
        self.send(port, frames.CMD_STATE)

    def _ask_hello(self, port):
        port.hello_asked_at = time.monotonic()
        self.send(port, frames.CMD_HELLO)

    def _read(self, port):
        try:
            data = port.serial.read(max(1, min(READ_MAX, port.serial.in_waiting)))
        except (serial.SerialException, OSError):
            self._lost(port)
            return
        if not data:
            return False
        for kind, seq, payload in port.reader.feed(data):
            self._frame(port, kind, seq, payload)
        return True

    def _frame(self, port, kind, seq, payload):
        """Link-level handling of one frame (sequence, hello); storing comes after."""
        try:
            fields = frames.parse(kind, payload)
        except frames.UnknownProtocol:
            port.counters["unknown_protocol"] += 1  # not ours to read: it changes nothing
            return
        except (ValueError, KeyError, IndexError, TypeError):
            port.reader.bad_frames += 1  # right CRC, wrong content: a board bug, not noise
            return
        if port.trace is not None:
            port.trace.append((seq, kind, bytes(payload)))
        mask = port.seq_mask
        now = time.monotonic()
        # (a 32-bit count, the network's, cannot come round in any outage: its gap is exact)
        quiet = (port.last_frame_at is not None and now - port.last_frame_at >= self.silence_s
                 and mask == 0xFFFF)
        port.last_frame_at = now
        if kind == frames.HELLO:
            port.expect = (seq + 1) & mask
            self._set_board(port, fields["board_id"] or port.path, fields)
            return
        if quiet and port.expect is not None:
            # After an interruption of any length the number says nothing (it may have
            # come round to just behind the expected one): count anew, ask for the state.
            port.counters["silences"] += 1
            port.gap_log.append((port.expect, seq))  # what was lost before is asked for too
            del port.gap_log[:-100]
            port.expect = None
            if port.state_wanted_at is None:
                self._ask_state(port)
        if port.expect is not None and seq != port.expect:
            behind = (port.expect - seq) & mask
            if 0 < behind <= 0x400:
                # From the past: a repeated or replayed frame. Kept as history (its stamp
                # says where it belongs), but the count goes on where it was.
                port.counters["replayed"] += 1
                self._queue(port, kind, seq, fields)
                return
            missing = (seq - port.expect) & mask
            port.counters["gaps"] += 1
            port.gap_log.append((port.expect, seq))
            del port.gap_log[:-100]
            port.counters["missing"] += missing if missing <= mask >> 1 else 0
            if port.state_wanted_at is None:
                self._ask_state(port)
        port.expect = (seq + 1) & mask
        if kind == frames.STATE:
            port.state_wanted_at = None
        elif kind == frames.HEARTBEAT:
            port.counters["device_rx_frames"] = fields["rx_frames"]
            port.counters["device_rx_bad"] = fields["rx_bad"]
            port.counters["device_tx_frames"] = fields["tx_frames"]
            return
        elif kind in (frames.ACK, frames.ERROR):
            port.answers.append((kind, fields))
            del port.answers[:-50]
            if self._new_game is not None:
                self._new_game_answered(port, kind, fields)
            if kind == frames.ERROR:
                game = port.event_requests.pop(fields["ref"], None)
                if game is not None and game != port.current_game:
                    # The board no longer has that game: what is missing stays missing
                    # (the game is stored as incomplete) and is not asked for again.
                    port.given_up.add(game)
                    port.incomplete.pop(game, None)
                elif game is None:
                    self._tell_error(port, fields)
            if kind == frames.ACK:
                return
        self._queue(port, kind, seq, fields)

    def _new_game_over_mqtt(self, now):
        board = self.new_game_board
        if self._new_game is None:
            port = self.mqtt.boards.get(board)
            if port is None or self.mqtt.nonce(board) is None:
                if self._new_game_wait is None:
                    self._new_game_wait = now
                elif self._new_game_wait and now - self._new_game_wait >= HELLO_WAIT_S:
                    self._new_game_wait = 0  # said once
                    self.say("mqtt:%s: waiting for the board on the broker to send the new "
                             "game (nothing heard from it yet)" % board)
                return
            rules, distance, sets, first = self.new_game[:4]
            teams = self.new_game[4] if len(self.new_game) > 4 else 0
            port.cmd_seq = (port.cmd_seq + 1) & 0xFFFF
            wire = frames.encode(frames.CMD_NEW_GAME, port.cmd_seq, frames.new_game_args(
                rules, distance, sets, first, self.replace, teams))
            self._new_game = [port, port.cmd_seq, wire, -1e9, False, False]
        task = self._new_game
        port, seq, wire, last, said, answered = task
        if answered or now - last < self.state_retry_s:
            return
        task[3] = now
        if self.mqtt.command(board, wire) and not said:
            task[4] = True
            self.say("%s: new game sent to the board, signed with its key%s" % (
                port.path, " (replacing an unfinished game)" if self.replace else ""))

    def _new_game_answered(self, port, kind, fields):
        task = self._new_game
        if task is None or task[0] is not port or fields["ref"] != task[1] or task[5]:
            return
        task[5] = True
        if kind == frames.ACK:
            self.say("%s: the board started the new game" % port.path)

    def _tell_error(self, port, fields):
        code = fields["code"]
        if code == frames.linkcodes.ERR_ASKED:
            self.say("%s: the board asks the players to confirm the new game (ok on the "
                     "board); --replace replaces an unfinished game without asking" % port.path)
        elif fields["ref"] != frames.linkcodes.NO_REF:
            self.say("%s: the board refused command %d (error %d %s)" % (
                port.path, fields["ref"], code, frames.printable(fields["detail"])))

    def _set_board(self, port, key, hello):
        port.board_key = key  # port.board (the row) changes when the hello is stored
        port.boot_id = hello["boot_id"] if hello else None
        port.hello_asked_at = None
        port.backlog.append((time.monotonic(), "hello", None, {"key": key, "hello": hello}))
        port.backlog += port.waiting
        port.waiting = []

    def _queue(self, port, kind, seq, fields):
        item = (time.monotonic(), kind, seq, fields)
        if port.board_key is None:
            if port.hello_asked_at is None:
                self._ask_hello(port)
            port.waiting.append(item)
        else:
            port.backlog.append(item)

    def _flush(self, port, wait_s=0.0):
        """Store the port's backlog in one transaction; a busy database keeps it waiting."""
        return self._flush_ports([port], wait_s)

    def _flush_ports(self, ports, wait_s=0.0):
        """Store the backlogs of `ports` in one transaction: the boards heard on a broker
        share one commit per batch rather than one each."""
        deadline = time.monotonic() + wait_s
        while True:
            self._burst_state = None
            followups = []
            try:
                with self.store.transaction():
                    for port in ports:
                        self._followups = []
                        self._short = []
                        self._disputed = []
                        for _, kind, seq, fields in port.backlog:
                            self._store(port, kind, seq, fields)
                        self._save_stats(port)
                        followups.append((port, self._followups, self._short,
                                          self._disputed))
                    refusals = list(self.store.refusals)
                    self.store.refusals.clear()
            except sqlite3.OperationalError as e:
                if not is_busy(e):
                    raise
                for port in ports:
                    port.counters["db_busy"] += 1
                if ports[0].counters["db_busy"] == 1:
                    self.say("database locked by another program: waiting (%d frames kept)"
                             % sum(len(port.backlog) for port in ports))
                if time.monotonic() >= deadline:
                    return False
                time.sleep(0.1)
                continue
            break
        if self._burst_state is not None:
            self.last_state = self._burst_state  # committed: now others may see it
        for game, number, why in refusals:
            self.say("game %d: stored event %d is refused by the rules (%s): kept, flagged, "
                     "left out of every replay" % (game, number, why))
        for port, port_followups, lost, disputed in followups:
            port.backlog = []
            if port.mark is not None:
                port.mark[1].retire_pending = False  # written down: committed
            for game in disputed:
                if game not in port.disputed_said:
                    port.disputed_said.add(game)
                    self.say("%s: game %d: a state the stored events do not give: kept as a "
                             "disputed claim, never the game's final state" % (port.path, game))
            for game, count, records in lost:
                self._tell_lost(port, game, count, records)
            for game, numbers in port_followups:
                if game is not None:
                    self._note_complete(port, game, numbers)
                if numbers is None or numbers:
                    self._ask_events(port, game, numbers)
        return True

    def _store(self, port, kind, seq, fields):
        store = self.store
        if kind == "hello":
            hello = fields["hello"]
            port.board = store.board(fields["key"], port.path, hello)
            if hello is not None:
                boot, new = store.boot(port.board, hello["boot_id"], hello["reset_cause"])
                if not new and boot != store.latest_boot(port.board):
                    port.counters["stale"] += 1  # an old boot's hello, replayed
            return
        board = port.board
        if kind == frames.ERROR:
            store.error(board, port.path, fields)
            return
        if kind not in (frames.STATE, frames.SHOT, frames.UNDO):
            return
        boot, new = store.boot(board, fields["boot_id"])
        if new and port.boot_id is not None and fields["boot_id"] != port.boot_id:
            self._followups.append((None, None))  # a boot without a hello: who is it?
        rank = boot << 32 | fields["stamp"]
        game = store.game(board, fields)
        before = store.final_rank(game) if kind == frames.STATE else None
        if kind == frames.SHOT:
            store.event(game, fields, rank)
        elif kind == frames.UNDO:
            store.undo(game, fields, rank)
            port.restoring.discard(game)  # the players took a shot back: hand nothing more
        else:
            verdict = store.state(game, fields, rank, seq)
            if verdict == "stale":
                port.counters["stale"] += 1
                return
            if verdict == "disputed":
                # Kept as a claim, flagged; the final state stays the last one believed.
                # Events that are all held but another CRC are asked for again below.
                port.counters["disputed"] += 1
                self._disputed.append(game)
            else:
                self._now_final(port, game, fields["state"], before, boot, fields["history"])
        if kind == frames.STATE or (kind == frames.SHOT and fields["resent"]):
            self._followups.append((game, store.check_history(game)))
            moved = store.moved_final
            if moved:
                store.moved_final = None
                self._burst_state = store.final(moved)  # a claim judged again is believed

    def _now_final(self, port, game, state, before, boot, count):
        store = self.store
        if (before is not None and before >> 32 != boot) or game in port.restoring:
            # A game resumed after a restart (or being handed back) with fewer events
            # than stored: the board lost some. Said, noted; nothing deleted.
            lost = store.lost_events(game)
            if lost and game not in port.restoring:
                store.loss(game, count, count + len(lost))
            self._short.append((game, count, lost))
        self.last_game = game
        self._burst_state = state
        if port.current_game != game:
            if port.current_game is not None:
                port.incomplete[port.current_game] = 0.0  # check the game it left
            port.current_game = game

    def _save_stats(self, port):
        counters = dict(port.counters, frames=port.reader.frames,
                        bad_frames=port.reader.bad_frames, noise_bytes=port.reader.noise_bytes)
        self.store.link_stats(port.path, port.board, port.serial is not None, counters)
        if port.mark is not None:
            # where the board's current boot stands, and the boots it has left: a restarted
            # logger takes no frame of them again (tools/logger/mqtt.py)
            nonce, proof = port.mark
            self.store.frame_mark(port.path, nonce.hex(), proof.highest,
                                  [n.hex() for n in proof.retired[-4:]]
                                  if proof.retire_pending else [])


def say_on_stderr(text):
    sys.stderr.write("logger: %s\n" % text)
    sys.stderr.flush()


def run(ports, db, stop_when=None, timeout=None, **options):
    """Log ``ports`` into ``db`` until ``stop_when(logger)``; returns the closed Logger."""
    logger = Logger(ports, db, **options)
    try:
        logger.run(stop_when=stop_when, timeout=timeout)
    finally:
        logger.close()
    return logger
