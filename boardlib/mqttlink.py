"""The board's network link: the frames of docs/protocol.md over MQTT, never holding up play.

    from boardlib.mqttlink import NetLink
    from boardlib.linkpair import Both
    net = NetLink(cfg["net"], wlan, now_ms, board_id=machine.unique_id())
    board.link = Both(serial_link, net)   # or net alone: used exactly like a boardlib.link.Link
    kind = board.link.poll(now_ms)        # every 10 ms: one small step of the network's work
    code = net.take_notice()              # an error code for the display, or 0

Topics (docs/network.md): `pinboard/<id>/state` the STATE frames (retained), `.../events`
every other frame (HELLO, SHOT, UNDO, HEARTBEAT, ERROR, ACK), `.../status` `online <nonce>` or
the last will `offline` (retained), and `.../cmd` the host's commands. A message body is
one frame exactly as on the serial line (COBS, CRC, sequence number): the host reads both
with the same code. MQTT itself is micropython-lib's `umqtt.simple`.

Play never waits here. Joining the WiFi, looking up a broker given by name, the TCP connect,
the TLS handshake and the broker's answers to CONNECT and SUBSCRIBE all run in the
background, a step a poll, each with a deadline; no poll waits for the network
(boardlib/netsock.py: the plumbing). A broker that is down, frozen or slow makes an attempt
fail, and the next one comes after a back-off (1 s, doubling to 30 s). Frames made while the
link is down are dropped (the sequence numbers show the gap); the boot HELLO waits for the
first connection. Every (re)connection, and every state request of the host, then sends
the current game's last shots again and the full state: the journal on flash stays the
truth, and the host's store takes the shots again without doubling them.

With `"tls": true` the connection is TLS 1.2 (RSA key exchange, AES-128-GCM), the broker's
certificate checked against the CA certificate in the board's flash (`ca.der` beside
/board.cfg). A handshake is a few calls of mbedtls, each too long for one poll if given the
broker's whole answer at once: `netsock.Gate` hands mbedtls one TLS record a poll, so that the
work is done in steps that each fit (docs/network.md, "TLS").

Commands on `.../cmd` are `counter (u64 LE) | frame | HMAC-SHA256(key, nonce | id |
counter | frame)`. The nonce is new at every boot and published with `online`; the counter
must grow. Anything else is refused, counted (`refused`) and reported in an ERROR frame
(code ERR_COMMAND_REFUSED, detail the count) at most once a second; the game is not touched.
"""

import errno
import os
import select
import socket
import struct
from binascii import hexlify, unhexlify

from umqtt import simple

from boardlib import link as _link
from boardlib import netsock
from boardlib.errors import BROKER as ERR_BROKER  # the codes shown and sent: boardlib.errors
from boardlib.errors import BROKER_LOGIN as ERR_LOGIN
from boardlib.errors import BROKER_NAME as ERR_NAME
from boardlib.errors import COMMAND_REFUSED as ERR_COMMAND_REFUSED
from boardlib.errors import TLS as ERR_TLS  # no CA certificate, or the broker's one refused
from boardlib.errors import TLS_MEMORY as ERR_TLS_MEMORY  # mbedtls had no memory for TLS
from boardlib.errors import WIFI as ERR_WIFI
from boardlib.framesign import OVERHEAD, FrameSigner
from boardlib.hmac256 import Hmac, same
from boardlib.linkpair import Answers, Both  # noqa: F401  Both: the two links as one
from boardlib.ticks import ticks_diff

try:
    from micropython import const
except ImportError:  # CPython: the integer itself
    const = int


JOIN_MS = const(15000)  # a WiFi join that takes longer has failed
# A join's failure reason counts from this long after connect(): the ESP32 keeps the last
# failure's reason until a new one comes (ports/esp32/network_wlan.c, 1.22+), so at the
# first polls of a new join, status() may still report the one before.
REASON_MS = const(5000)
DIAL_MS = const(5000)  # a TCP connect that takes longer has failed
HANDSHAKE_MS = const(10000)  # and a TLS handshake
# The broker's answer to CONNECT or SUBSCRIBE: a power-saving WiFi delays each packet by up
# to a DTIM interval (100 ms and more); a busy club network or broker more.
REPLY_MS = const(10000)
# The one cipher suite offered: a key exchange whose every step fits a poll on the ESP32
# (docs/network.md, "TLS": ECDHE takes half a second in one call of mbedtls).
TLS_CIPHER = "TLS-RSA-WITH-AES-128-GCM-SHA256"
BACKOFF_MS = const(1000)
BACKOFF_MAX_MS = const(30000)
KEEPALIVE_S = const(30)
_RING = const(64)  # the current game's shots sent again after a reconnection
_OUTBOX = const(_RING + 16)  # frames waiting for the broker; the oldest go when full
_CMD_BUF = const(128)
_MAX_CMD = const(72)  # counter + the longest command frame (RESTORE: 24) + tag + room
_TAG = const(32)
_REPORT_MS = const(1000)
_READS_PER_POLL = const(4)
_CONNACK = const(4)  # bytes of the broker's answers: CONNACK, SUBACK
_SUBACK = const(5)

# Where the link is.
OFF = const(0)
JOIN = const(1)
DIAL = const(2)
LOGIN = const(3)
SUBSCRIBE = const(4)
UP = const(5)
WAIT = const(6)
HANDSHAKE = const(7)
RESOLVE = const(8)
STATE_NAMES = ("off", "join", "dial", "login", "subscribe", "up", "wait", "handshake",
               "resolve")
# The states in which the link waits on the broker (the simulator keeps real time then).
ON_THE_BROKER = (RESOLVE, DIAL, HANDSHAKE, LOGIN, SUBSCRIBE)
# The failures of a TLS connection that are mbedtls lacking memory, not the broker.
_NO_MEMORY = netsock.TLS_NO_MEMORY


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


class NetLink(Answers):
    def __init__(self, net, wlan, now_ms, board_id=b"", clock=None, ca_path="/ca.der"):
        self.net = net
        self.ca_path = ca_path
        self._tls = None  # the TLS context, made once
        self._gate = None
        self._ssl = None
        self.wlan = wlan
        self.clock = clock or _ticks_ms
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
        self._addr = None  # the broker's socket address, kept once known
        self._resolver = None
        self._sent = False  # LOGIN, SUBSCRIBE: the packet is sent, its answer awaited
        self._pid = 0
        self._one = bytearray(1)
        if wlan is not None:
            _radio_on(wlan)
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
        except (OSError, simple.MQTTException, netsock.Later, AssertionError, IndexError,
                TypeError, ValueError):
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
        elif state == RESOLVE:
            self._resolve(now_ms)
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
        self._sent = False

    def _join(self, now_ms):
        wlan = self.wlan
        if wlan.isconnected():
            self._joining = False
            self._open(now_ms)
            return
        if not self._joining:
            self._joining = True
            self._since = now_ms
            try:
                wlan.connect(self.net["ssid"], self.net["password"])
            except OSError:
                pass  # the ESP32 refuses while its driver is still joining: wait for that
            return
        status = wlan.status()
        waited = ticks_diff(now_ms, self._since)
        if (0 < status < 1000 and waited >= REASON_MS) or waited >= JOIN_MS:
            # below 1000: the ESP32's reason the join failed (no such AP, wrong password)
            self._joining = False
            try:
                wlan.disconnect()
            except OSError:
                pass
            self._fail(now_ms, ERR_WIFI)

    def _open(self, now_ms):
        host = self.net["host"]
        if self._addr is None and not netsock.is_address(host):
            # A name: looked up over UDP a step a poll (the port's getaddrinfo() blocks)
            self._resolver = netsock.Resolver()
            try:
                self._resolver.start(host, self.wlan.ifconfig()[3], now_ms)
            except OSError:
                self._resolver = None
                self._fail(now_ms, ERR_NAME)
                return
            self._enter(RESOLVE, now_ms)
            return
        if self._addr is None:
            self._addr = socket.getaddrinfo(host, self.net["port"])[0][-1]  # no lookup
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

    def _resolve(self, now_ms):
        try:
            address = self._resolver.step(now_ms)
        except OSError:
            self._resolver = None
            self._fail(now_ms, ERR_NAME)
            return
        if address is not None:
            self._resolver = None
            self._addr = socket.getaddrinfo(address, self.net["port"])[0][-1]  # no lookup
            self._open(now_ms)

    def _dial(self, now_ms):
        for _, events in self._poller.ipoll(0):
            if events & (select.POLLERR | select.POLLHUP):
                self._drop(now_ms, ERR_BROKER)
                return
            if events & select.POLLOUT:
                if self.net["tls"]:
                    self._start_tls(now_ms)
                    return
                self._sock = netsock.Stream(self._raw_sock, self.clock)
                self._enter(LOGIN, now_ms)
                self._login(now_ms)  # CONNECT goes at once
                return
        if ticks_diff(now_ms, self._since) >= DIAL_MS:
            self._drop(now_ms, ERR_BROKER)

    def _start_tls(self, now_ms):
        try:
            if self._tls is None:
                with open(self.ca_path, "rb") as f:
                    ca = f.read()  # DER
                self._tls = netsock.tls_context(ca, TLS_CIPHER)
            self._gate = netsock.Gate(self._raw_sock)
            self._ssl = self._tls.wrap_socket(self._gate, server_hostname=self.net["host"],
                                              do_handshake_on_connect=False)
        except MemoryError:
            self._drop(now_ms, ERR_TLS_MEMORY)
            return
        except OSError as exc:
            # no CA certificate, or mbedtls without memory for the connection
            self._drop(now_ms, ERR_TLS_MEMORY if exc.args[0] in _NO_MEMORY else ERR_TLS)
            return
        except (ValueError, ImportError):
            self._drop(now_ms, ERR_TLS)  # not a certificate, or no TLS in this MicroPython
            return
        self._enter(HANDSHAKE, now_ms)
        self._handshake(now_ms)  # the ClientHello goes at once

    def _handshake(self, now_ms):
        """One record of the broker's handshake a poll, and mbedtls's work on it."""
        gate = self._gate
        gate.next_record()
        try:
            # drives the handshake (no application data comes before it ends); readinto,
            # as SSLSocket has recv() only from MicroPython 1.25
            self._ssl.readinto(self._one)
        except ValueError:  # the broker's certificate refused (the reason is in the text)
            self._drop(now_ms, ERR_TLS)
            return
        except MemoryError:
            self._drop(now_ms, ERR_TLS_MEMORY)
            return
        except OSError as exc:
            code = exc.args[0]
            if code in _NO_MEMORY:
                self._drop(now_ms, ERR_TLS_MEMORY)
                return
            if code != errno.EAGAIN:
                # mbedtls's errors are negative, the socket's positive
                self._drop(now_ms, ERR_TLS if code < 0 else ERR_BROKER)
                return
        if gate.finished and not gate.left and not gate.header_len:
            gate.gated = False
            self._sock = netsock.Stream(self._ssl, self.clock, tls=True)
            self._enter(LOGIN, now_ms)
            self._login(now_ms)
        elif ticks_diff(now_ms, self._since) >= HANDSHAKE_MS:
            self._drop(now_ms, ERR_BROKER)

    def _ask(self, now_ms, answer, call):
        """A umqtt call that sends a packet and reads the broker's `answer` bytes, over two
        polls or more (netsock.Stream): call(True) is sent, call(False) made again once the
        answer is here. True when it has returned; False while waiting (or dropped: no
        answer within REPLY_MS)."""
        sock = self._sock
        if not self._sent:
            self._sent = True
            sock.record()
            try:
                call(True)
            except netsock.Later:
                sock.done()
                return False  # sent: the broker answers in a later poll
        elif sock.has(answer):
            sock.replay()
            call(False)
            if not sock.done():
                raise ValueError("umqtt wrote another packet the second time")
        else:
            sock.flush()
            if ticks_diff(now_ms, self._since) >= REPLY_MS:
                self._drop(now_ms, ERR_BROKER)
            return False
        sock.done()
        return True

    def _connect(self, first):
        netsock.umqtt_connect(simple, self.client, self._sock)

    def _send_subscribe(self, first):
        client = self.client
        if first:
            self._pid = client.pid
        else:
            client.pid = self._pid  # the same packet id as the first time
        client.subscribe(self.topic_cmd)

    def _login(self, now_ms):
        """CONNECT in one poll, the CONNACK taken in a later one."""
        try:
            if not self._ask(now_ms, _CONNACK, self._connect):
                return
        except simple.MQTTException:  # 4: bad user name or password, 5: not authorised
            self._drop(now_ms, ERR_LOGIN)
            return
        self._enter(SUBSCRIBE, now_ms)
        self._subscribe(now_ms)

    def _subscribe(self, now_ms):
        """SUBSCRIBE in one poll, the SUBACK taken in a later one; then the link is up."""
        if not self._ask(now_ms, _SUBACK, self._send_subscribe):
            return
        sock = self._sock
        client = self.client
        self._enter(UP, now_ms)
        self._failures = 0
        self.connects += 1
        self._pinged_at = now_ms
        client.publish(self.topic_status, b"online " + hexlify(self.nonce), True)
        if self._hello is not None:
            client.publish(self.topic_events, self._hello)
            self._hello = None
        sock.flush()
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
        for _ in range(_READS_PER_POLL):
            if not sock.ready():  # a whole packet, so that umqtt's reads never wait
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
        if self._resolver is not None:
            self._resolver.close()
            self._resolver = None
        if code == ERR_BROKER and not netsock.is_address(self.net["host"]):
            self._addr = None  # looked up again: the broker may have moved
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


def _radio_on(wlan):
    """The station interface on, once: `active(True)` waits for the WiFi driver to start
    (ports/esp32/network_wlan.c), which belongs at start-up, not in a poll. Power saving
    off where the release can (WLAN.PM_NONE, 1.21+): with ESP-IDF's default (modem sleep,
    WIFI_PS_MIN_MODEM) each packet to the board may wait for the next DTIM beacon, 100 ms
    and more; the board runs from mains power."""
    wlan.active(True)
    pm = getattr(wlan, "PM_NONE", None)
    if pm is not None:
        try:
            wlan.config(pm=pm)
        except (OSError, ValueError, TypeError):
            pass  # a release that has the constant but not the setting: the default stays


def _ticks_ms():
    import time

    return time.ticks_ms()
