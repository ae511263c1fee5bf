"""The logger's MQTT side: every board on a broker, logged like a serial port.

    source = MqttSource("mqtt://logger:secret@127.0.0.1:1883", keys={"table1": key_bytes})
    source = MqttSource("mqtts://logger:secret@club-pc:8883", ca="club/ca.crt")  # TLS
    logger = Logger([], "games.db", mqtt=source)      # or together with serial ports
    logger.run(...)

paho-mqtt's network thread receives pinboard/+/state, /events and /status and queues the
messages; the logger's thread takes them in its step() (a pipe wakes its select) and stores
each batch in one transaction, with the same frame checks, gap detection and state
requests as a serial port (tools/logger/core.py). Each board is a port named `mqtt:<id>`.

What MQTT adds: a frame with a sequence number just behind the expected one is a
duplicate (the broker's redelivery, or a retained state seen again) and is skipped;
`online <nonce>` on a board's status starts its count anew (a new boot or first sight)
and gives the nonce that commands are signed with; commands (the state requests) go to
pinboard/<id>/cmd as `counter (u64 LE) | frame | HMAC-SHA256(key, nonce | id | counter |
frame)`, with the key from `keys` (a board without a key is logged, never commanded).
"""

import collections
import hashlib
import hmac
import os
import struct
import time
import urllib.parse

import paho.mqtt.client as paho

from tools.logger.core import Port

# The status first: a retained `online <nonce>` then comes before the retained state, and
# the logger can sign its state request at once.
TOPICS = ("pinboard/+/status", "pinboard/+/state", "pinboard/+/events")
_DUPLICATE_WINDOW = 0x8000


def parse_url(url):
    """mqtt://user:password@host:port -> (host, port, user or None, password or None).
    mqtts:// is the same over TLS (port 8883 by default)."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("mqtt", "mqtts") or not parts.hostname:
        raise ValueError("expected mqtt://[user:password@]host[:port] (or mqtts://), not %r"
                         % url)
    try:
        port = parts.port or (8883 if parts.scheme == "mqtts" else 1883)
    except ValueError:
        raise ValueError("bad port in %r" % url) from None
    user = urllib.parse.unquote(parts.username) if parts.username else None
    password = urllib.parse.unquote(parts.password) if parts.password else None
    return parts.hostname, port, user, password


def load_keys(path):
    """A keys file: one `board-id hex-key` a line, `#` comments. -> {id: key bytes}."""
    keys = {}
    with open(path) as f:
        for number, line in enumerate(f, 1):
            words = line.split("#", 1)[0].split()
            if not words:
                continue
            try:
                if len(words) != 2:
                    raise ValueError
                keys[words[0]] = bytes.fromhex(words[1])
            except ValueError:
                raise ValueError("%s:%d: expected BOARD-ID HEX-KEY" % (path, number)) from None
    return keys


def sign(key, nonce, board_id, counter, frame):
    """A command message for pinboard/<board_id>/cmd."""
    body = struct.pack("<Q", counter) + frame
    tag = hmac.new(key, nonce + board_id.encode() + body, hashlib.sha256).digest()
    return body + tag


class _Commands:
    """A board port's `serial`: a command frame written here is signed and published."""

    def __init__(self, source, board_id):
        self.source = source
        self.board_id = board_id

    def write(self, wire):
        self.source.command(self.board_id, bytes(wire))
        return len(wire)

    def close(self):
        pass


class MqttSource:
    def __init__(self, url, keys=None, client_id=None, keepalive=30, prefix="", ca=None):
        self.host, self.port, user, password = parse_url(url)
        # A central broker of a federation holds each club's boards under a prefix such
        # as "clubs/berlin/" or, for every club, "clubs/+/" (docs/scaling.md); a club's
        # own broker has none. Board ids must then be unique across the federation.
        self.prefix = prefix
        self._prefix_levels = prefix.rstrip("/").split("/") if prefix else []
        self.keys = dict(keys or {})
        self.boards = {}  # board id -> Port
        self.nonces = {}
        self._counter = 0
        self.duplicates = 0
        self.unsigned = 0  # commands not sent: no key or no nonce for the board yet
        self.connected = False
        self.connects = 0
        self._queue = collections.deque()
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        os.set_blocking(self._wake_w, False)
        self.client = paho.Client(paho.CallbackAPIVersion.VERSION2,
                                  client_id=client_id or "pinboard-logger-%d" % os.getpid())
        if user is not None:
            self.client.username_pw_set(user, password)
        if url.startswith("mqtts:"):
            # the broker's certificate checked against the club's CA (PEM), or the
            # system's CAs without one
            self.client.tls_set(ca_certs=ca)
        self.client.on_connect = self._on_connect
        self.client.on_disconnect = self._on_disconnect
        self.client.on_message = self._on_message
        self.client.reconnect_delay_set(0.25, 4)
        self.client.connect_async(self.host, self.port, keepalive)
        self.client.loop_start()

    # -- paho's thread ----------------------------------------------------------------------

    def _on_connect(self, client, userdata, flags, reason, properties):
        if reason.is_failure:
            return
        client.subscribe([(self.prefix + topic, 0) for topic in TOPICS])
        self._push(("connect", None, None))

    def _on_disconnect(self, client, userdata, flags, reason, properties):
        self._push(("disconnect", None, None))

    def _on_message(self, client, userdata, message):
        self._push(("message", message.topic, message.payload))

    def _push(self, item):
        self._queue.append((time.monotonic(),) + item)
        try:
            os.write(self._wake_w, b"x")
        except BlockingIOError:
            pass  # the pipe is full of wake-ups already

    # -- the logger's thread ----------------------------------------------------------------

    def fileno(self):
        return self._wake_r

    def pump(self, logger):
        """Take what has arrived into the boards' backlogs (the logger's step stores them
        all in one transaction); ask again for states still missing."""
        try:
            while os.read(self._wake_r, 4096):
                pass
        except BlockingIOError:
            pass
        batch = []
        queue = self._queue
        while queue:
            batch.append(queue.popleft())
        if batch:
            self._store(logger, batch)
        now = time.monotonic()
        for port in self.boards.values():
            if port.state_wanted_at is not None and (
                    now - port.state_wanted_at >= logger.state_retry_s):
                logger._ask_state(port)

    def _store(self, logger, batch):
        """Each frame through the logger's checks into its board's backlog; the logger's
        step stores every board's backlog in one transaction."""
        for _, what, topic, payload in batch:
            if what == "connect":
                self.connected = True
                self.connects += 1
                for port in self.boards.values():
                    if self.connects > 1:
                        port.counters["reconnects"] += 1
                    logger._ask_state(port)
                continue
            if what == "disconnect":
                self.connected = False
                continue
            parts = self._board_topic(topic)
            if parts is None:
                continue
            port = self._port(parts[1])
            port.read_since_flush = True  # its link counters change: store them too
            if parts[2] == "status":
                if self._status(port, parts[1], payload):
                    logger._ask_state(port)  # new to us: its whole game, please
                continue
            for kind, seq, body in port.reader.feed(payload):
                if self._duplicate(port, kind, seq):
                    continue
                logger._frame(port, kind, seq, body)

    def _board_topic(self, topic):
        """["pinboard", id, what] of a topic under the prefix, or None."""
        levels = topic.split("/")
        n = len(self._prefix_levels)
        if len(levels) != n + 3 or levels[n] != "pinboard":
            return None
        for want, got in zip(self._prefix_levels, levels[:n], strict=True):
            if want != "+" and want != got:
                return None
        return levels[n:]

    def _port(self, board_id):
        port = self.boards.get(board_id)
        if port is None:
            port = self.boards[board_id] = Port("mqtt:" + board_id)
            port.serial = _Commands(self, board_id)
            port.opened_once = True
        return port

    def _status(self, port, board_id, payload):
        words = payload.split()
        if len(words) == 2 and words[0] == b"online":
            try:
                nonce = bytes.fromhex(words[1].decode())
            except ValueError:
                return
            if self.nonces.get(board_id) != nonce:
                self.nonces[board_id] = nonce
                port.expect = None  # a new boot, or first sight: its count starts here
                return True
        return False

    def _duplicate(self, port, kind, seq):
        if port.expect is None:
            return False
        behind = (port.expect - seq) & 0xFFFF
        if 0 < behind < _DUPLICATE_WINDOW:
            self.duplicates += 1
            return True
        return False

    def command(self, board_id, wire):
        key = self.keys.get(board_id)
        nonce = self.nonces.get(board_id)
        if key is None or nonce is None or "+" in self.prefix:
            self.unsigned += 1  # a central logger of many clubs only listens
            return
        # Microseconds of the wall clock: still growing after a restart of the logger.
        self._counter = max(self._counter + 1, time.time_ns() // 1000)
        self.client.publish("%spinboard/%s/cmd" % (self.prefix, board_id),
                            sign(key, nonce, board_id, self._counter, wire))

    def close(self):
        self.client.disconnect()
        self.client.loop_stop()
        os.close(self._wake_r)
        os.close(self._wake_w)
