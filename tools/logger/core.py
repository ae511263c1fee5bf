"""The logger's loop: read every board's port, check frames, find gaps, store, reconnect.

    lg = Logger(["/dev/ttyUSB1"], "games.db")
    lg.run(stop_when=lambda lg: lg.latest_final() is not None, timeout=60)
    lg.close()

    # or in a thread:  threading.Thread(target=lg.run_forever).start(); ...
    # lg.last_state_equals(state) once stored; lg.stop()

Each port's read burst is stored in one transaction. A sequence number that skips means
frames were lost: the logger asks the board for its full state (and asks again every
second until one comes). A port that fails is closed and reopened every half second, as
when a USB adapter is unplugged and plugged back in.
"""

import select
import threading
import time

import serial

from tools.logger import frames
from tools.logger.store import Store

REOPEN_S = 0.5
STATE_RETRY_S = 1.0
READ_MAX = 65536


class Port:
    """One board's serial port and what the logger knows about its link."""

    def __init__(self, path):
        self.path = path
        self.serial = None
        self.reader = frames.FrameReader()
        self.expect = None
        self.board = None
        self.cmd_seq = 0
        self.state_wanted_at = None
        self.last_open_try = 0.0
        self.opened_once = False
        self.gap_log = []  # (first missing seq, seq that showed the gap), most recent last
        self.trace = None  # set to a list to record every accepted (seq, kind, payload)
        self.counters = dict.fromkeys(
            ("gaps", "missing", "state_requests", "reconnects", "device_rx_frames",
             "device_rx_bad", "device_tx_frames"), 0)


class Logger:
    def __init__(self, ports, db, baud=115200, new_game=None, store=None,
                 state_retry_s=STATE_RETRY_S, mqtt=None):
        if isinstance(ports, str) and not isinstance(db, str):
            ports, db = db, ports  # Logger(db, ports) reads as well; the order is obvious
        self.store = store or Store(db)
        self.last_state = None  # the newest committed board state, for other threads
        self._burst_state = None
        self._stop = threading.Event()
        self.state_retry_s = state_retry_s
        self.baud = baud
        self.new_game = new_game  # (rules, (d1, d2), sets, first) sent once per port
        self.ports = [Port(path) for path in ports]
        self.last_game = None
        self.mqtt = mqtt  # a tools.logger.mqtt.MqttSource: every board on a broker

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
            if port.serial is not None and port.state_wanted_at is not None and (
                    now - port.state_wanted_at >= self.state_retry_s):
                self._ask_state(port)
        live = [port for port in self.ports if port.serial is not None]
        fds = [port.serial.fileno() for port in live]
        if self.mqtt is not None:
            fds.append(self.mqtt.fileno())
        if not fds:
            time.sleep(wait)
            return
        try:
            ready, _, _ = select.select(fds, [], [], wait)
        except (OSError, ValueError):
            ready = fds
        for port in live:
            if port.serial is not None and port.serial.fileno() in ready:
                self._read(port)
        if self.mqtt is not None:
            self.mqtt.pump(self)

    def latest_final(self):
        return None if self.last_game is None else self.store.final(self.last_game)

    def send(self, port, kind, payload=b""):
        port.cmd_seq = (port.cmd_seq + 1) & 0xFFFF
        try:
            port.serial.write(frames.encode(kind, port.cmd_seq, payload))
        except (serial.SerialException, OSError):
            self._lost(port)

    def close(self):
        self._stop.set()
        if self.mqtt is not None:
            self.mqtt.close()
        for port in self.ports:
            if port.serial is not None:
                port.serial.close()
                port.serial = None
        self.store.close()

    # -- inside ---------------------------------------------------------------------------

    def _open(self, port, now):
        port.last_open_try = now
        try:
            port.serial = serial.Serial(port.path, self.baud, timeout=0)
        except (serial.SerialException, OSError, ValueError):
            port.serial = None
            return
        if port.opened_once:
            port.counters["reconnects"] += 1
        # The expected seq is kept: frames the board sent while the cable was out show up
        # as a gap (a reboot meanwhile sends a hello, which starts the count anew).
        self._ask_state(port)
        if self.new_game is not None and not port.opened_once:
            rules, distance, sets, first = self.new_game
            self.send(port, frames.CMD_NEW_GAME,
                      frames.new_game_args(rules, distance, sets, first))
        port.opened_once = True

    def _lost(self, port):
        try:
            port.serial.close()
        except (serial.SerialException, OSError):
            pass
        port.serial = None
        port.last_open_try = time.monotonic()
        self._save_stats(port, commit=True)

    def _ask_state(self, port):
        port.state_wanted_at = time.monotonic()
        port.counters["state_requests"] += 1
        self.send(port, frames.CMD_STATE)

    def _read(self, port):
        try:
            data = port.serial.read(max(1, min(READ_MAX, port.serial.in_waiting)))
        except (serial.SerialException, OSError):
            self._lost(port)
            return
        if not data:
            return
        found = port.reader.feed(data)
        self._burst_state = None
        with self.store.transaction():
            for kind, seq, payload in found:
                self._frame(port, kind, seq, payload)
            self._save_stats(port)
        if self._burst_state is not None:
            self.last_state = self._burst_state  # committed: now others may see it

    def _frame(self, port, kind, seq, payload):
        try:
            fields = frames.parse(kind, payload)
        except (ValueError, KeyError, IndexError, TypeError):
            port.reader.bad_frames += 1  # right CRC, wrong content: a board bug, not noise
            return
        if port.trace is not None:
            port.trace.append((seq, kind, bytes(payload)))
        if kind == frames.HELLO:
            port.expect = (seq + 1) & 0xFFFF
            key = fields["board_id"] or port.path
            port.board = self.store.board(key, port.path, fields)
            self._ask_state(port)
            return
        if port.board is None:
            port.board = self.store.board(port.path, port.path)
        if port.expect is not None and seq != port.expect:
            missing = (seq - port.expect) & 0xFFFF
            port.counters["gaps"] += 1
            port.gap_log.append((port.expect, seq))
            del port.gap_log[:-100]
            port.counters["missing"] += missing if missing < 0x8000 else 0
            if port.state_wanted_at is None:
                self._ask_state(port)
        port.expect = (seq + 1) & 0xFFFF
        if kind == frames.STATE:
            self.last_game = self.store.state(port.board, fields["game"], fields["state"], seq)
            self._burst_state = fields["state"]
            port.state_wanted_at = None
        elif kind == frames.SHOT:
            self.store.shot(port.board, fields["game"], fields)
        elif kind == frames.HEARTBEAT:
            port.counters["device_rx_frames"] = fields["rx_frames"]
            port.counters["device_rx_bad"] = fields["rx_bad"]
            port.counters["device_tx_frames"] = fields["tx_frames"]
        elif kind == frames.ERROR:
            self.store.error(port.board, port.path, fields)

    def _save_stats(self, port, commit=False):
        counters = dict(port.counters, frames=port.reader.frames,
                        bad_frames=port.reader.bad_frames, noise_bytes=port.reader.noise_bytes)
        if commit:
            with self.store.transaction():
                self.store.link_stats(port.path, port.board, port.serial is not None, counters)
        else:
            self.store.link_stats(port.path, port.board, port.serial is not None, counters)


def run(ports, db, stop_when=None, timeout=None, **options):
    """Log ``ports`` into ``db`` until ``stop_when(logger)``; returns the closed Logger."""
    logger = Logger(ports, db, **options)
    try:
        logger.run(stop_when=stop_when, timeout=timeout)
    finally:
        logger.close()
    return logger
