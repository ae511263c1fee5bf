"""The logger's MQTT side: every board on a broker, logged like a serial port.

    source = MqttSource("mqtt://logger:secret@127.0.0.1:1883", keys={"table1": key_bytes})
    source = MqttSource("mqtts://logger:secret@club-pc:8883", ca="club/ca.crt")  # TLS
    logger = Logger([], "games.db", mqtt=source)      # or together with serial ports
    logger.run(...)

paho-mqtt's network thread receives pinboard/+/state, /events and /status and queues the
messages; the logger's thread takes them in its step() (a pipe wakes its select) and stores
each batch in one transaction, with the same frame checks, gap detection and state
requests as a serial port (tools/logger/core.py). Each board is a port named `mqtt:<id>`.

What MQTT adds (docs/network.md): every board message is sealed, `counter (u32 LE) |
frame | tag`, the tag a truncated HMAC-SHA256 with the board's key over its boot's nonce,
its id, the counter and the frame (boardlib/framesign.py). A message is taken only when
the tag is right for the board the topic names, under the nonce of its current boot or of
a newer one it announced (`online <nonce>` on its status), with a counter it has not
used, and, for a hello, naming that same board; anything else is refused, counted in
link_stats and never reaches the store. The counter (32 bits) numbers the frames for gap
detection. Commands go to pinboard/<id>/cmd as `counter (u64 LE) | frame |
HMAC-SHA256(key, nonce | id | counter | frame)`, with the key from `keys` (a board
without a key is neither logged nor commanded).
"""

import collections
import hashlib
import hmac
import os
import struct
import time
import urllib.parse

import paho.mqtt.client as paho

from boardlib import framesign
from tools.logger import frames
from tools.logger.port import Port

# The status first: a retained `online <nonce>` then comes before the retained state, and
# the logger can sign its state request at once.
TOPICS = ("pinboard/+/status", "pinboard/+/state", "pinboard/+/events")
COUNTER_MASK = 0xFFFFFFFF  # the sealed messages' counter: 32 bits
WINDOW = 64  # counters this far below the highest are taken once each, if not seen
ANNOUNCED = 4  # nonces kept from a board's status messages, newest last
# A sealed message: counter, the shortest frame on the wire (0x00, COBS of 7 bytes, 0x00),
# the tag; and the longest.
SHORTEST = framesign.COUNTER + 10 + framesign.TAG
LONGEST = framesign.COUNTER + frames.MAX_WIRE + framesign.TAG


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


class Proof:
    """What proves one board's frames: its key, the nonces its status announced, and per
    boot (nonce) the highest counter taken and which of the WINDOW below it were taken."""

    def __init__(self, key):
        self.key = key
        self.announced = []  # nonces from `online <nonce>`, newest last
        self.current = None  # the nonce of the boot whose frames are taken
        self.highest = -1
        self.seen = 0  # bit i: counter highest - 1 - i was taken
        self.retired = []  # nonces of boots the board has left: never taken again
        self.retire_pending = False  # the boot just left is to be written down
        self.loaded = False  # what the database remembers is read (at first sight)

    def candidates(self):
        """The nonces a message may be sealed with, the likeliest first."""
        out = [] if self.current is None else [self.current]
        for nonce in reversed(self.announced):
            if nonce not in out and nonce not in self.retired:
                out.append(nonce)
        return out

    def fresh(self, nonce, counter):
        """True when this counter of this boot was never taken (and is not too old)."""
        if nonce != self.current:
            return True  # a newer boot: its first frame
        if counter > self.highest:
            return True
        behind = self.highest - counter
        return 0 < behind <= WINDOW and not self.seen >> (behind - 1) & 1

    def take(self, nonce, counter):
        if nonce != self.current:
            if self.current is not None:
                self.retired.append(self.current)
                self.retire_pending = True
            self.current, self.highest, self.seen = nonce, counter, 0
        elif counter > self.highest:
            shift = counter - self.highest
            self.seen = (((self.seen << shift) | (1 << (shift - 1))) & ((1 << WINDOW) - 1)
                         if shift <= WINDOW else 0)
            self.highest = counter
        else:
            self.seen |= 1 << (self.highest - counter - 1)


def open_message(key, nonce, board_id, message):
    """(counter, wire) of a sealed board message whose tag is right, else None."""
    if not SHORTEST <= len(message) <= LONGEST:
        return None
    body = message[:-framesign.TAG]
    tag = hmac.new(key, nonce + board_id.encode() + body, hashlib.sha256).digest()
    if not hmac.compare_digest(tag[:framesign.TAG], message[-framesign.TAG:]):
        return None
    return struct.unpack_from("<I", body)[0], body[framesign.COUNTER:]


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
        self.proofs = {}  # board id -> Proof
        self._counter = 0
        self.duplicates = 0  # messages refused for a counter already taken (any board)
        self.unsent = 0  # commands not sent: no key or no nonce for the board yet
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
            board_id = parts[1]
            port = self._port(board_id)
            port.read_since_flush = True  # its link counters change: store them too
            proof = self._proof(logger, port, board_id)
            if parts[2] == "status":
                if self._status(proof, payload) and proof.key is not None:
                    logger._ask_state(port)  # a (re)connection: its whole game, please
                continue
            if proof.key is None:
                self._refuse(logger, port, "no_key")
                continue
            self._message(logger, port, proof, board_id, payload)

    def _message(self, logger, port, proof, board_id, payload):
        """One sealed board message: proven, fresh and about this board, or refused."""
        for nonce in proof.candidates():
            opened = open_message(proof.key, nonce, board_id, payload)
            if opened is not None:
                break
        else:
            for nonce in proof.retired[-ANNOUNCED:]:
                if open_message(proof.key, nonce, board_id, payload) is not None:
                    self._refuse(logger, port, "old_boot")  # the board's, from a boot it left
                    return
            self._refuse(logger, port, "unsigned")  # no seal, a wrong key, cut, garbage
            return
        counter, wire = opened
        if not proof.fresh(nonce, counter):
            self.duplicates += 1
            self._refuse(logger, port, "repeated")  # a replay, or the broker's redelivery
            return
        frame = frames.one_frame(wire)
        if frame is None:
            port.reader.bad_frames += 1  # the board's own tag on no frame: a board bug
            return
        kind, _, body = frame
        if kind == frames.HELLO and not self._names(body, board_id):
            self._refuse(logger, port, "wrong_board")  # a hello for another board's id
            return
        if nonce != proof.current:
            port.expect = None  # a new boot: its count starts here
        proof.take(nonce, counter)
        port.mark = (nonce, proof)
        port.reader.frames += 1
        if port.board_key is None:
            # known by its topic, which the broker's ACL and the tag tie to it
            logger._set_board(port, board_id.encode().hex(), None)
        logger._frame(port, kind, counter, body)

    @staticmethod
    def _names(body, board_id):
        try:
            return frames.parse(frames.HELLO, body)["board_id"] == board_id.encode().hex()
        except ValueError:
            return True  # not a hello the logger reads: the logger counts it as such

    def _refuse(self, logger, port, why):
        port.counters[why] += 1
        if why == "no_key" and port.counters[why] == 1:
            logger.say("%s: no key for this board (--keys): its frames cannot be proven "
                       "and are refused" % port.path)

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
            port.seq_mask = COUNTER_MASK
        return port

    def _proof(self, logger, port, board_id):
        proof = self.proofs.get(board_id)
        if proof is None:
            proof = self.proofs[board_id] = Proof(self.keys.get(board_id))
        if not proof.loaded and proof.key is not None:
            # the boots this database has seen: the current one goes on where it was (a
            # restarted logger takes no replay), the ones the board left stay refused
            proof.loaded = True
            for nonce, counter, retired in logger.store.frame_marks(port.path):
                nonce = bytes.fromhex(nonce)
                if retired:
                    proof.retired.append(nonce)
                else:
                    # every counter up to the mark counts as taken (the window's record
                    # of the ones below it is not kept)
                    proof.current, proof.highest = nonce, counter
                    proof.seen = (1 << WINDOW) - 1
                    # the count goes on from there: frames missed while no logger ran
                    # show as a gap
                    port.expect = (counter + 1) & COUNTER_MASK
        return proof

    def _status(self, proof, payload):
        """A board's `online <nonce>` (each connection): True. The nonce, there or in the
        last will `offline <nonce>`, is kept as one its frames may be sealed with (it
        proves nothing by itself)."""
        words = payload.split()
        if len(words) == 2 and words[0] in (b"online", b"offline"):
            try:
                nonce = bytes.fromhex(words[1].decode())
            except ValueError:
                return False
            if len(nonce) != framesign.NONCE:
                return False
            if nonce in proof.announced:
                proof.announced.remove(nonce)
            proof.announced.append(nonce)
            del proof.announced[:-ANNOUNCED]
            return words[0] == b"online"
        return False

    def nonce(self, board_id):
        """The nonce a command to the board is signed with: that of the boot its last
        proven frame came from; before any, the newest it announced. (An announcement
        proves nothing: one forged cannot turn the logger away from the board's boot.)"""
        proof = self.proofs.get(board_id)
        if proof is None:
            return None
        if proof.current is None and proof.announced:
            return proof.announced[-1]
        return proof.current

    def command(self, board_id, wire):
        """Sign and publish a command frame for the board; True when it was handed to the
        broker (paho), False when it cannot be signed (no key, no nonce yet, or a central
        logger of many clubs, which only listens)."""
        key = self.keys.get(board_id)
        nonce = self.nonce(board_id)
        if key is None or nonce is None or "+" in self.prefix:
            self.unsent += 1
            return False
        # Microseconds of the wall clock: still growing after a restart of the logger.
        self._counter = max(self._counter + 1, time.time_ns() // 1000)
        info = self.client.publish("%spinboard/%s/cmd" % (self.prefix, board_id),
                                   sign(key, nonce, board_id, self._counter, wire))
        return info.rc == paho.MQTT_ERR_SUCCESS

    def close(self):
        self.client.disconnect()
        self.client.loop_stop()
        os.close(self._wake_r)
        os.close(self._wake_w)
