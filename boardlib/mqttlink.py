"""The board's network link: the frames of docs/protocol.md over MQTT, never holding up play.

    from boardlib.mqttlink import NetLink, Both
    net = NetLink(cfg["net"], wlan, now_ms, board_id=machine.unique_id())
    board.link = Both(serial_link, net)   # or net alone: used exactly like a boardlib.link.Link
    kind = board.link.poll(now_ms)        # every 10 ms: one small step of the network's work
    code = net.take_notice()              # an error code for the display, or 0

Topics (docs/network.md): `pinboard/<id>/state` the STATE frames (retained), `.../events`
every other frame (HELLO, SHOT, UNDO, HEARTBEAT, ERROR, ACK), `.../status` `online <nonce>` or
the last will `offline` (retained), and `.../cmd` the host's commands. A message body is
one frame exactly as on the serial line (COBS, CRC, sequence number): the host reads both
with the same code. MQTT itself is micropython-lib's `umqtt.simple`.

Play never waits here. Joining the WiFi and the TCP connect run in the background and are
checked once a poll; umqtt's calls read through `_Sock`, which holds what it sends in a
buffer drained without blocking and gives a read at most `BUDGET_MS` of waiting (only the
CONNACK and SUBACK ever wait); a broker that is down, frozen or slow makes an attempt fail,
and the next one comes after a back-off (1 s, doubling to 30 s). Frames made while the
link is down are dropped (the sequence numbers show the gap); the boot HELLO waits for the
first connection. Every (re)connection, and every state request of the host, then sends
the current game's last shots again and the full state: the journal on flash stays the
truth, and the host's store takes the shots again without doubling them.

With `"tls": true` the connection is TLS 1.2 (RSA key exchange, AES-128-GCM), the broker's
certificate checked against the CA certificate in the board's flash (`ca.der` beside
/board.cfg). A handshake is a few calls of mbedtls, each too long for one poll if given the
broker's whole answer at once: `_Gate` hands mbedtls one TLS record a poll, so that the
work is done in steps that each fit (docs/network.md, "TLS").

Commands on `.../cmd` are `counter (u64 LE) | frame | HMAC-SHA256(key, nonce | id |
counter | frame)`. The nonce is new at every boot and published with `online`; the counter
must grow. Anything else is refused, counted (`refused`) and reported in an ERROR frame
(code ERR_COMMAND_REFUSED, detail the count) at most once a second; the game is not touched.
"""

import errno
import io
import os
import select
import socket
import struct
from binascii import hexlify, unhexlify

from umqtt import simple

from boardlib import link as _link
from boardlib.framesign import OVERHEAD, FrameSigner
from boardlib.hmac256 import Hmac, same
from boardlib.ticks import ticks_add, ticks_diff

try:
    from micropython import const
except ImportError:  # CPython: the integer itself
    const = int


# Display and ERROR-frame codes (the same numbers as firmware/errors.py).
ERR_COMMAND_REFUSED = const(63)
ERR_WIFI = const(71)
ERR_BROKER = const(72)
ERR_LOGIN = const(73)
ERR_TLS = const(74)  # no CA certificate, or the handshake failed (certificate refused)

BUDGET_MS = const(20)  # the longest one poll may wait on the broker
JOIN_MS = const(15000)  # a WiFi join that takes longer has failed
DIAL_MS = const(5000)  # so has a TCP connect
HANDSHAKE_MS = const(10000)  # and a TLS handshake
# The one cipher suite offered: a key exchange whose every step fits a poll on the ESP32
# (docs/network.md, "TLS": ECDHE takes half a second in one call of mbedtls).
TLS_CIPHER = "TLS-RSA-WITH-AES-128-GCM-SHA256"
BACKOFF_MS = const(1000)
BACKOFF_MAX_MS = const(30000)
KEEPALIVE_S = const(30)
_RING = const(64)  # the current game's shots sent again after a reconnection
_OUTBOX = const(_RING + 16)  # frames waiting for the broker; the oldest go when full
_TX_BUF = const(1024)
_RX_BUF = const(256)
_CMD_BUF = const(128)
_MAX_CMD = const(72)  # counter + the longest command frame (RESTORE: 24) + tag + room
_TAG = const(32)
_REPORT_MS = const(1000)
_READS_PER_POLL = const(4)

# Where the link is.
OFF = const(0)
JOIN = const(1)
DIAL = const(2)
LOGIN = const(3)
SUBSCRIBE = const(4)
UP = const(5)
WAIT = const(6)
HANDSHAKE = const(7)
STATE_NAMES = ("off", "join", "dial", "login", "subscribe", "up", "wait", "handshake")

_POLL = const(3)  # MicroPython's stream ioctl requests: poll, close
_CLOSE = const(4)
_TLS_HEADER = const(5)  # record header: type, version (2), length (2)
_CHANGE_CIPHER_SPEC = const(20)
_HANDSHAKE_RECORD = const(22)


class _Sock:
    """What umqtt.simple reads and writes: a connected non-blocking socket with buffers.

    write() never blocks: bytes go to a buffer that flush() drains as far as the socket
    takes them (OSError when the buffer is full: the connection is dropped). read() gives
    what has arrived; a read in blocking mode waits for the rest until `deadline`, then
    raises OSError(ETIMEDOUT)."""

    def __init__(self, sock, clock):
        self.sock = sock
        self.clock = clock
        self.poller = select.poll()
        self.poller.register(sock, select.POLLIN)
        self.tx = bytearray(_TX_BUF)
        self.tx_len = 0
        self.rx = bytearray(_RX_BUF)
        self.rx_len = 0
        self.blocking = True
        self.deadline = 0
        self.received_at = clock()

    # -- what umqtt calls -------------------------------------------------------------------

    def setblocking(self, flag):
        self.blocking = flag

    def settimeout(self, seconds):
        pass  # the deadline rules

    def connect(self, addr):
        pass  # already connected, without blocking, by NetLink

    def close(self):
        pass  # NetLink closes the real socket

    def write(self, buf, length=None):
        if isinstance(buf, str):
            buf = buf.encode()
        if length is None:
            length = len(buf)
        if self.tx_len + length > _TX_BUF:
            raise OSError(errno.ENOBUFS)
        self.tx[self.tx_len:self.tx_len + length] = buf[:length]
        self.tx_len += length
        # Not sent yet: umqtt writes a packet in pieces, and small pieces each on the wire
        # would wait for the broker's delayed ACK (Nagle). flush() sends them in one go.
        return length

    def read(self, n):
        self.flush()  # what umqtt wrote is what the broker is to answer
        while self.rx_len < n:
            if self._fill():
                continue
            if not self.blocking and self.rx_len == 0:
                return None
            left = ticks_diff(self.deadline, self.clock())
            if left <= 0:
                raise OSError(errno.ETIMEDOUT)
            self.poller.poll(left)
        out = bytes(self.rx[:n])
        self.rx[:self.rx_len - n] = self.rx[n:self.rx_len]
        self.rx_len -= n
        return out

    # -- what NetLink calls -----------------------------------------------------------------

    def room(self):
        return _TX_BUF - self.tx_len

    def flush(self):
        if not self.tx_len:
            return
        try:
            sent = self.sock.send(memoryview(self.tx)[:self.tx_len])
        except OSError as exc:
            if exc.args[0] != errno.EAGAIN:
                raise
            return
        if sent:
            self.tx[:self.tx_len - sent] = self.tx[sent:self.tx_len]
            self.tx_len -= sent

    def pending(self):
        """True when bytes from the broker are waiting (read or not). An idle call asks
        the poller only: no exception, no bytes object, nothing allocated."""
        if self.rx_len:
            return True
        for _ in self.poller.ipoll(0):
            return self._fill()
        return False

    def _fill(self):
        if self.rx_len >= _RX_BUF:
            raise OSError(errno.ENOBUFS)
        try:
            got = self.sock.recv(_RX_BUF - self.rx_len)
        except OSError as exc:
            if exc.args[0] == errno.EAGAIN:
                return False
            raise
        if got is None:
            return False
        if not got:
            raise OSError(errno.ECONNRESET)  # the broker closed the connection
        self.rx[self.rx_len:self.rx_len + len(got)] = got
        self.rx_len += len(got)
        self.received_at = self.clock()
        return True


class _Gate(io.IOBase):
    """The TCP socket as mbedtls reads it: during the handshake at most one TLS record of
    the broker's is completed a poll (`next_record()`, at each poll, allows the next), so
    each poll's share of the handshake is the work of one record; afterwards, everything as
    it comes. A record that arrives in pieces ends in a later poll, and that poll ends there:
    the next record never starts behind it. `records` counts the records read whole.

    Non-blocking: a read with nothing there gives None, which mbedtls takes for "wait"."""

    def __init__(self, sock):
        self.sock = sock
        self.poller = select.poll()
        self.poller.register(sock, select.POLLIN | select.POLLOUT)
        self.header = bytearray(_TLS_HEADER)
        self.header_len = 0
        self.left = 0  # bytes of the current record mbedtls has still to read
        self.allowed = True  # may a new record begin in this poll
        self.records = 0
        self.gated = True
        self.cipher_changed = False
        self.finished = False  # the broker's Finished is read: the handshake is over

    def next_record(self):
        self.allowed = True

    def readinto(self, buf):
        if not self.gated:
            return self.sock.readinto(buf)
        if self.header_len < _TLS_HEADER:
            if self.header_len == 0 and not self.allowed:
                return None
            n = self.sock.readinto(memoryview(buf)[:min(len(buf), _TLS_HEADER - self.header_len)])
            if n:
                self.header[self.header_len:self.header_len + n] = buf[:n]
                self.header_len += n
                if self.header_len == _TLS_HEADER:
                    self.left = self.header[3] << 8 | self.header[4]
                    if not self.left:
                        self._record_read()  # an empty record: nothing more to read
            return n
        n = self.sock.readinto(memoryview(buf)[:min(len(buf), self.left)])
        if n:
            self.left -= n
            if not self.left:
                self._record_read()
        return n

    def _record_read(self):
        self.header_len = 0
        self.allowed = False  # this poll's record is read: the next waits
        self.records += 1
        kind = self.header[0]
        if kind == _CHANGE_CIPHER_SPEC:
            self.cipher_changed = True
        elif kind == _HANDSHAKE_RECORD and self.cipher_changed:
            self.finished = True

    def write(self, buf):
        return self.sock.write(buf)

    def ioctl(self, request, arg):
        if request == _POLL:
            for _, events in self.poller.ipoll(0):
                return events & arg
            return 0
        if request == _CLOSE:
            self.sock.close()
        return 0


class _Dialed:
    """Stands in for the socket module inside umqtt.simple: its connect() gets the socket
    NetLink has already connected, instead of opening one and blocking on it."""

    def __init__(self):
        self.next = None

    def socket(self, *args):
        return self.next

    def getaddrinfo(self, host, port, *args):
        return [(socket.AF_INET, socket.SOCK_STREAM, 0, "", (host, port))]


_DIALED = _Dialed()
simple.socket = _DIALED  # type: ignore[attr-defined]  # umqtt.simple's socket, replaced


class _Frames:
    """The inner Link's stream: frames it writes go to the NetLink, commands come from it."""

    def __init__(self, net):
        self.net = net
        self.cmd = bytearray(_CMD_BUF)
        self.cmd_len = 0

    def write(self, wire):
        self.net._frame_out(wire)
        return len(wire)

    def any(self):
        return self.cmd_len

    def readinto(self, buf):
        n = min(len(buf), self.cmd_len)
        buf[:n] = self.cmd[:n]
        self.cmd[:self.cmd_len - n] = self.cmd[n:self.cmd_len]
        self.cmd_len -= n
        return n

    def put(self, frame):
        if self.cmd_len + len(frame) > _CMD_BUF:
            return False
        self.cmd[self.cmd_len:self.cmd_len + len(frame)] = frame
        self.cmd_len += len(frame)
        return True


class _Answers:
    """A command as the application reads and answers it, forwarded to the Link that
    received it (`_asked`): NetLink's own, or in Both the one the command came from."""

    _asked: _link.Link

    NONE = _link.NONE
    CMD_NEW_GAME = _link.CMD_NEW_GAME
    CMD_UNDO = _link.CMD_UNDO
    CMD_STATE = _link.CMD_STATE
    CMD_PING = _link.CMD_PING
    CMD_EVENT = _link.CMD_EVENT
    CMD_LOGGED = _link.CMD_LOGGED
    CMD_RESTORE = _link.CMD_RESTORE

    @property
    def cmd_seq(self):
        return self._asked.cmd_seq

    @property
    def cmd_game(self):
        return self._asked.cmd_game

    @property
    def cmd_index(self):
        return self._asked.cmd_index

    @property
    def cmd_record(self):
        return self._asked.cmd_record

    @property
    def replace(self):
        return self._asked.replace

    def cmd_settings(self):
        return self._asked.cmd_settings()

    def ack(self, cmd_seq):
        return self._asked.ack(cmd_seq)

    def nack(self, cmd_seq, code):
        return self._asked.nack(cmd_seq, code)


class NetLink(_Answers):
    def __init__(self, net, wlan, now_ms, board_id=b"", clock=None, budget_ms=BUDGET_MS,
                 ca_path="/ca.der"):
        self.net = net
        self.ca_path = ca_path
        self._tls = None  # the TLS context, made once
        self._gate = None
        self._ssl = None
        self.wlan = wlan
        self.clock = clock or _ticks_ms
        self.budget_ms = budget_ms
        self.id = net["id"] or hexlify(board_id).decode()
        base = "pinboard/%s/" % self.id
        self.topic_state = (base + "state").encode()
        self.topic_events = (base + "events").encode()
        self.topic_status = (base + "status").encode()
        self.topic_cmd = (base + "cmd").encode()
        self.nonce = os.urandom(8)
        key = unhexlify(net["key"])
        self._mac = Hmac(key)
        self._id_bytes = self.id.encode()
        # Every frame this link makes is sealed (boardlib/framesign.py): counter | frame |
        # tag. The counter numbers them from 0 at boot, sent or not (a gap shows a loss).
        self._signer = FrameSigner(key, self.nonce, self._id_bytes)
        self.counter = 0
        self._frames = _Frames(self)
        # The hello names the board as its topics and tag do: the host binds the three.
        self.link = self._asked = _link.Link(self._frames, now_ms, board_id=self._id_bytes)
        self.client = simple.MQTTClient(
            self._id_bytes, net["host"], net["port"], user=net["user"].encode() or None,
            password=net["pass"].encode() or None, keepalive=KEEPALIVE_S)
        self.client.set_callback(self._message)
        # with the boot's nonce: a logger that starts later proves the retained state by it
        self.client.set_last_will(self.topic_status, b"offline " + hexlify(self.nonce),
                                  retain=True)
        self.state = JOIN if wlan is not None else OFF
        self._since = now_ms
        self._joining = False
        self._addr = None
        self._raw_sock = None
        self._sock = None
        self._poller = None
        self._failures = 0
        self._wait_ms = 0
        self._pinged_at = now_ms
        self._outbox = []
        self._hello = None
        self._state = None  # (game, packed state) last sent
        self._ring = []
        self._last_counter = -1
        self._unreported = 0
        self._reported_at = now_ms
        self.notice = 0
        self.last_error = 0
        self.refused = 0
        self.connects = 0
        self.dropped = 0  # frames lost while the link was down or the outbox full

    # -- what the application calls (as on a Link) ------------------------------------------

    @property
    def game(self):
        return self.link.game

    @game.setter
    def game(self, number):
        self.link.game = number

    @property
    def game_id(self):
        return self.link.game_id  # a bytearray the application fills in place

    @game_id.setter
    def game_id(self, shared):
        self.link.game_id = shared

    def send_hello(self, version, reset_cause, now_ms):
        return self.link.send_hello(version, reset_cause, now_ms)

    def send_state(self, payload, now_ms, history=b""):
        self._state = (bytes(payload), bytes(history))
        return self.link.send_state(payload, now_ms, history)

    def send_event(self, index, record, player, points, to, now_ms, resent=False):
        ring = self._ring
        ident = bytes(self.link.game_id)
        if ring and ring[0][0] != ident:
            ring.clear()  # a new game: the old game's events are the host's already
        if len(ring) == _RING:
            ring.pop(0)
        ring.append((ident, index, bytes(record), player, points, to))
        return self.link.send_event(index, record, player, points, to, now_ms, resent)

    def send_undo(self, history_len, now_ms):
        return self.link.send_undo(history_len, now_ms)

    def send_error(self, code, detail="", ref=_link.NO_REF):
        return self.link.send_error(code, detail, ref)

    def poll(self, now_ms):
        """One step of the network's work, then the first verified command (or NONE)."""
        try:
            self._step(now_ms)
        except (OSError, simple.MQTTException, AssertionError, IndexError, TypeError,
                ValueError):
            self._drop(now_ms, ERR_BROKER)
        if self._unreported and ticks_diff(now_ms, self._reported_at) >= _REPORT_MS:
            self._unreported = 0
            self._reported_at = now_ms
            self.link.send_error(ERR_COMMAND_REFUSED, self.refused)
        kind = self.link.poll(now_ms)
        if kind == _link.CMD_STATE:
            # The host asks for the full state: over MQTT that is the game's shots too,
            # since shots sent while it was away from the broker never reached it.
            self._resend_shots(now_ms)
        return kind

    def take_notice(self):
        code = self.notice
        self.notice = 0
        return code

    @property
    def connected(self):
        return self.state == UP

    # -- the connection, a step per poll ----------------------------------------------------

    def _step(self, now_ms):
        state = self.state
        if state == OFF:
            return
        if state == WAIT:
            if ticks_diff(now_ms, self._since) >= self._wait_ms:
                self._enter(JOIN, now_ms)
            return
        if state != JOIN and not self.wlan.isconnected():
            self._drop(now_ms, ERR_WIFI if state != UP else 0)
            return
        if state == JOIN:
            self._join(now_ms)
        elif state == DIAL:
            self._dial(now_ms)
        elif state == HANDSHAKE:
            self._handshake(now_ms)
        elif state == LOGIN:
            self._login(now_ms)
        elif state == SUBSCRIBE:
            self._subscribe(now_ms)
        else:
            self._serve(now_ms)

    def _enter(self, state, now_ms):
        self.state = state
        self._since = now_ms

    def _join(self, now_ms):
        wlan = self.wlan
        if wlan.isconnected():
            self._joining = False
            self._open(now_ms)
            return
        if not self._joining:
            self._joining = True
            self._since = now_ms
            wlan.active(True)
            try:
                wlan.connect(self.net["ssid"], self.net["password"])
            except OSError:
                pass  # the ESP32 refuses while its driver is still joining: wait for that
            return
        status = wlan.status()
        if (0 < status < 1000) or ticks_diff(now_ms, self._since) >= JOIN_MS:
            # below 1000: the ESP32's reason the join failed (no such AP, wrong password)
            self._joining = False
            try:
                wlan.disconnect()
            except OSError:
                pass
            self._fail(now_ms, ERR_WIFI)

    def _open(self, now_ms):
        if self._addr is None:
            # A name costs one blocking lookup (the first time only); an IP address none.
            self._addr = socket.getaddrinfo(self.net["host"], self.net["port"])[0][-1]
        sock = socket.socket()
        sock.setblocking(False)
        try:
            sock.connect(self._addr)
        except OSError as exc:
            if exc.args[0] not in (errno.EINPROGRESS, errno.EAGAIN):
                sock.close()
                self._fail(now_ms, ERR_BROKER)
                return
        self._raw_sock = sock
        self._poller = select.poll()
        self._poller.register(sock, select.POLLOUT)
        self._enter(DIAL, now_ms)

    def _dial(self, now_ms):
        for _, events in self._poller.ipoll(0):
            if events & (select.POLLERR | select.POLLHUP):
                self._drop(now_ms, ERR_BROKER)
                return
            if events & select.POLLOUT:
                if self.net["tls"]:
                    self._start_tls(now_ms)
                    return
                self._sock = _Sock(self._raw_sock, self.clock)
                self._enter(LOGIN, now_ms)
                return
        if ticks_diff(now_ms, self._since) >= DIAL_MS:
            self._drop(now_ms, ERR_BROKER)

    def _start_tls(self, now_ms):
        try:
            if self._tls is None:
                import tls

                context = tls.SSLContext(tls.PROTOCOL_TLS_CLIENT)
                with open(self.ca_path, "rb") as f:
                    context.load_verify_locations(f.read())  # DER
                context.verify_mode = tls.CERT_REQUIRED  # type: ignore[attr-defined]
                context.set_ciphers([TLS_CIPHER])
                self._tls = context
            self._gate = _Gate(self._raw_sock)
            self._ssl = self._tls.wrap_socket(self._gate, server_hostname=self.net["host"],
                                              do_handshake_on_connect=False)
        except (OSError, ValueError, ImportError):
            self._drop(now_ms, ERR_TLS)  # no CA certificate (or not one), or no TLS
            return
        self._enter(HANDSHAKE, now_ms)
        self._handshake(now_ms)  # the ClientHello goes at once

    def _handshake(self, now_ms):
        """One record of the broker's handshake a poll, and mbedtls's work on it."""
        gate = self._gate
        gate.next_record()
        try:
            self._ssl.recv(1)  # drives the handshake; no application data comes before it ends
        except ValueError:  # the broker's certificate refused (the reason is in the text)
            self._drop(now_ms, ERR_TLS)
            return
        except OSError as exc:
            code = exc.args[0]
            if code != errno.EAGAIN:
                # mbedtls's errors are negative, the socket's positive
                self._drop(now_ms, ERR_TLS if code < 0 else ERR_BROKER)
                return
        if gate.finished and not gate.left and not gate.header_len:
            gate.gated = False
            self._sock = _Sock(self._ssl, self.clock)
            self._enter(LOGIN, now_ms)
        elif ticks_diff(now_ms, self._since) >= HANDSHAKE_MS:
            self._drop(now_ms, ERR_BROKER)

    def _login(self, now_ms):
        client = self.client
        client.sock = None
        _DIALED.next = self._sock
        self._sock.deadline = ticks_add(self.clock(), self.budget_ms)
        try:
            client.connect()
        except simple.MQTTException:  # 4: bad user name or password, 5: not authorised
            self._drop(now_ms, ERR_LOGIN)
            return
        finally:
            _DIALED.next = None
        self._enter(SUBSCRIBE, now_ms)

    def _subscribe(self, now_ms):
        self._sock.deadline = ticks_add(self.clock(), self.budget_ms)
        self.client.subscribe(self.topic_cmd)
        self._enter(UP, now_ms)
        self._failures = 0
        self.connects += 1
        self._pinged_at = now_ms
        client = self.client
        client.publish(self.topic_status, b"online " + hexlify(self.nonce), True)
        if self._hello is not None:
            client.publish(self.topic_events, self._hello)
            self._hello = None
        self._sock.flush()
        self._resend_shots(now_ms)
        if self._state is not None:
            self.link.send_state(self._state[0], now_ms, self._state[1])

    def _resend_shots(self, now_ms):
        link = self.link
        ident = bytes(link.game_id)
        for event in self._ring:
            if event[0] != ident:
                continue  # a game since replaced by a new one: the host has its end
            link.send_event(event[1], event[2], event[3], event[4], event[5], now_ms)

    def _serve(self, now_ms):
        sock = self._sock
        client = self.client
        sock.deadline = ticks_add(self.clock(), self.budget_ms)  # one budget for the poll
        for _ in range(_READS_PER_POLL):
            if not sock.pending():
                break
            client.check_msg()
        outbox = self._outbox
        while outbox:
            topic, frame = outbox[0]
            if sock.room() < len(topic) + len(frame) + 8:
                break  # the rest next poll, once the socket has taken these bytes
            client.publish(topic, frame, topic is self.topic_state)
            outbox.pop(0)
        if ticks_diff(now_ms, self._pinged_at) >= KEEPALIVE_S * 500:
            self._pinged_at = now_ms
            client.ping()
        sock.flush()
        if ticks_diff(self.clock(), sock.received_at) >= KEEPALIVE_S * 1500:
            self._drop(now_ms, ERR_BROKER)  # no answer to two pings: the broker is gone

    def _fail(self, now_ms, code):
        self.notice = self.last_error = code
        self._failures += 1
        wait = BACKOFF_MS
        for _ in range(min(self._failures - 1, 5)):
            wait *= 2
        self._wait_ms = min(wait, BACKOFF_MAX_MS)
        self._enter(WAIT, now_ms)

    def _drop(self, now_ms, code):
        """Close the connection; `code` 0 when it was up (try again at once), else the
        error that ended the attempt."""
        was_up = self.state == UP
        for sock in (self._ssl, self._raw_sock):
            if sock is not None:
                try:
                    sock.close()  # TLS: mbedtls's buffers go now, not at the next collection
                except (OSError, ValueError):
                    pass
        self._raw_sock = self._sock = self._poller = self._gate = self._ssl = None
        self.client.sock = None
        self._outbox = []
        if was_up and not code:
            self._failures = 0
            self._wait_ms = 0
            self._enter(WAIT, now_ms)
        elif was_up:
            self._failures = 0
            self._fail(now_ms, code)
        else:
            self._fail(now_ms, code or ERR_WIFI)

    # -- frames and commands ----------------------------------------------------------------

    def _frame_out(self, wire):
        # A COBS frame from the Link: 0x00, the code byte, then the kind (never 0, so
        # COBS leaves it as it is).
        counter = self.counter
        self.counter = counter + 1
        kind = wire[2]
        if kind == _link.HELLO and self.state != UP:
            self._hello = self._seal(counter, wire)  # waits for the first connection
            return
        if self.state != UP and self.state != SUBSCRIBE:
            self.dropped += 1
            return
        outbox = self._outbox
        if len(outbox) == _OUTBOX:
            outbox.pop(0)
            self.dropped += 1
        outbox.append((self.topic_state if kind == _link.STATE else self.topic_events,
                       self._seal(counter, wire)))

    def _seal(self, counter, wire):
        message = bytearray(len(wire) + OVERHEAD)  # the message itself waits in the outbox
        self._signer.seal(counter, wire, message)
        return message

    def _message(self, topic, msg):
        if topic != self.topic_cmd:
            return
        if not 8 + 7 + _TAG <= len(msg) <= _MAX_CMD:
            self._refuse()
            return
        body = memoryview(msg)[:-_TAG]
        tag = self._mac.digest(self.nonce, self._id_bytes, body)
        if not same(tag, memoryview(msg)[-_TAG:]):
            self._refuse()
            return
        counter = struct.unpack_from("<Q", msg, 0)[0]
        if counter <= self._last_counter:
            self._refuse()  # a replay, or an old command overtaken by a newer one
            return
        self._last_counter = counter
        self._frames.put(body[8:])

    def _refuse(self):
        self.refused += 1
        self._unreported += 1


class Both(_Answers):
    """The serial link and the network link as one: frames go out on both, commands come
    from either and are answered on the one they came from."""

    def __init__(self, first, second):
        self.links = (first, second)
        self._asked = first
        second.game_id = first.game_id  # one identity, filled in place, for both

    @property
    def game(self):
        return self.links[0].game

    @game.setter
    def game(self, number):
        for lk in self.links:
            lk.game = number

    @property
    def game_id(self):
        return self.links[0].game_id

    def send_hello(self, version, reset_cause, now_ms):
        for lk in self.links:
            lk.send_hello(version, reset_cause, now_ms)

    def send_state(self, payload, now_ms, history=b""):
        for lk in self.links:
            lk.send_state(payload, now_ms, history)

    def send_event(self, index, record, player, points, to, now_ms, resent=False):
        for lk in self.links:
            lk.send_event(index, record, player, points, to, now_ms, resent)

    def send_undo(self, history_len, now_ms):
        for lk in self.links:
            lk.send_undo(history_len, now_ms)

    def send_error(self, code, detail="", ref=_link.NO_REF):
        for lk in self.links:
            lk.send_error(code, detail, ref)

    def poll(self, now_ms):
        for lk in self.links:
            kind = lk.poll(now_ms)
            if kind:
                self._asked = lk
                return kind
        return _link.NONE


def _ticks_ms():
    import time

    return time.ticks_ms()
