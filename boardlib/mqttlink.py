"""The board's network link: the frames of docs/protocol.md over MQTT, never holding up play.

    from boardlib.mqttlink import Both, NetLink
    net = NetLink(cfg["net"], wlan, now_ms, board_id=machine.unique_id(), frames=serial_link)
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
background, a step a poll, each with a deadline; no poll waits for the network. Those steps
are modules loaded while the link needs them, one at a time, and dropped: boardlib/netdial.py
(the WiFi and the TCP connect), boardlib/nettls.py (the TLS handshake), boardlib/netlogin.py
(CONNECT and SUBSCRIBE).
A broker that is down, frozen or slow makes an attempt fail, and the next one comes after a
back-off (1 s, doubling to 30 s). Frames made while the
link is down are dropped (the sequence numbers show the gap); the boot HELLO waits for the
first connection. Every (re)connection, and every state request of the host, then sends
the current game's last shots again and the full state: the journal on flash stays the
truth, and the host's store takes the shots again without doubling them.

With `"tls": true` the connection is TLS 1.2 (RSA key exchange, AES-128-GCM), the broker's
certificate checked against the CA certificate in the board's flash (`ca.der` beside
/board.cfg), by boardlib/nettls.py, which only such a board loads; once connected it keeps
only the gate the SSL socket reads through (boardlib/netgate.py). A broker given by name is
looked up by boardlib/netdns.py, loaded for the lookup and dropped once the address is known
(docs/performance.md, "The network link's heap").

Commands on `.../cmd` are `counter (u64 LE) | frame | HMAC-SHA256(key, nonce | id |
counter | frame)`. The nonce is new at every boot and published with `online`; the counter
must grow. Anything else is refused, counted (`refused`) and reported in an ERROR frame
(code COMMAND_REFUSED, detail the count) at most once a second; the game is not touched.

`Stream` (boardlib/netstream.py) is what umqtt.simple reads and writes.
"""

import struct
import sys

from umqtt import simple

from boardlib.framesign import OVERHEAD
from boardlib.link import Link
from boardlib.netstream import Later, forget

try:
    from time import ticks_diff
except ImportError:  # CPython: boardlib.ticks wraps as the ESP32 does
    from boardlib.ticks import ticks_diff

try:
    from micropython import const
except ImportError:  # CPython: the integer itself
    const = int

# What NetLink holds is set by boardlib/netconfig.py (`make_link`): its types, for the type
# checker alone (tools/testing/typecheck.py reads this block; the compiler folds it away).
TYPE_CHECKING = const(0)
if TYPE_CHECKING:
    from typing import Any, Callable

    from boardlib.framesign import FrameSigner
    from boardlib.netdns import Resolver
    from boardlib.netstream import Stream


# The error codes reported here (firmware/errors.py lists every code; tests/test_board_codes.py).
_COMMAND_REFUSED = const(63)
_WIFI = const(71)
_BROKER = const(72)
_BROKER_NAME = const(75)
_LINK_MEMORY = const(76)
_BACKOFF_MS = const(1000)
_BACKOFF_MAX_MS = const(30000)
_KEEPALIVE_S = const(30)
_RING = const(64)  # the current game's shots sent again after a reconnection
_SLOT = const(10)  # a shot in the ring: index u16, record, player, points i16, to
_SLOT_FORMAT = const("<H4sBhB")  # (struct's)
_OUTBOX = const(_RING + 16)  # frames waiting for the broker; the oldest go when full
_COMMAND_BUF = const(128)
_MAX_CMD = const(72)  # counter + the longest command frame (RESTORE: 24) + tag + room
_TAG = const(32)
_REPORT_MS = const(1000)
_READS_PER_POLL = const(4)
# boardlib.link's numbers used here (tests/test_board_codes.py: tools/linkcodes.py's).
_HELLO = const(0x01)
_STATE = const(0x02)
_NONE = const(0)
_CMD_STATE = const(0x83)
_NO_REF = const(0xFFFF)
# The link's states used here (boardlib/netstream.py names them all).
_OFF = const(0)
_JOIN = const(1)
_LOGIN = const(3)
_SUBSCRIBE = const(4)
_UP = const(5)
_WAIT = const(6)
_HANDSHAKE = const(7)
_RESOLVE = const(8)


class Both:
    """The serial link and the network link as one: frames go out on both, commands come
    from either and are answered on the one they came from (what the application reads of
    a command, `cmd_seq`, `ack()` and the rest, is that link's)."""

    def __init__(self, first, second):
        self._asked = first
        self.links = (first, second)
        second.game_id = first.game_id  # one identity, filled in place, for both

    def __getattr__(self, name):
        # The names of a command as the application reads and answers it (boardlib.link.Link):
        # taken from the Link the command came from. (str.startswith takes no tuple before
        # MicroPython 1.25.)
        if name[:4] == "cmd_" or name in ("ack", "nack", "replace"):
            return getattr(self._asked, name)
        raise AttributeError(name)

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

    def send_error(self, code, detail="", ref=_NO_REF):
        for lk in self.links:
            lk.send_error(code, detail, ref)

    def poll(self, now_ms):
        for lk in self.links:
            kind = lk.poll(now_ms)
            if kind:
                self._asked = lk
                return kind
        return _NONE


class NetLink(Link):
    """The network link is itself the Link that makes its frames (boardlib.link): what
    that Link writes to its stream (this object, `write`) is sealed and published, and the
    commands proven here are what it reads (`readinto`)."""

    # (set by boardlib/netconfig.py, make_link: annotations alone, which hold nothing)
    net: dict
    wlan: Any
    clock: Callable[[], int]
    client: simple.MQTTClient
    bufs: tuple
    topic_state: bytes
    topic_events: bytes
    topic_cmd: bytes
    _signer: FrameSigner
    _named: bool
    _resolver: Resolver
    _raw_sock: Any
    _ssl: Any
    _sock: Stream
    _outbox: list
    _ring_id: bytearray
    counter: int
    _cmd_len: int
    _since: int
    _failures: int
    _pinged_at: int
    _ring_at: int
    _last_counter: int
    _unreported: int
    _reported_at: int
    notice: int
    refused: int
    dropped: int

    def __init__(self, net, wlan, now_ms, board_id=b"", clock=None, ca_path="/ca.der",
                 frames=None):
        # Made once, at start-up, by the settings' module, which the board drops after boot
        # (boardlib/netconfig.py, `make_link`): that code is not held for good.
        from boardlib import netconfig

        netconfig.make_link(self, net, wlan, now_ms, board_id, clock, ca_path, frames,
                            _KEEPALIVE_S)
        # The commands proven here, waiting for the Link to read them (readinto)
        self._cmd = bytearray(_COMMAND_BUF)
        # The current game's last _RING shots (send_event's arguments), oldest first from
        # _ring_at, in a buffer made once: a shot allocates nothing here
        self._ring = bytearray(_RING * _SLOT)
        # Room in the attribute table, beside the Link's (docs/performance.md, "Attribute
        # tables with room"): its 97 names filled a table of 97.
        self._net_room = None

    # -- what the application calls (as on a Link) ------------------------------------------

    def send_state(self, payload, now_ms, history=b""):
        # Kept, not copied: the application makes its state in these buffers, so they
        # hold the latest state whenever the link comes (back) up.
        self._state = (payload, history)
        return Link.send_state(self, payload, now_ms, history)

    def send_event(self, index, record, player, points, to, now_ms, resent=False):
        ident = self.game_id
        if self._ring_id != ident:  # a new game: the old game's events are the host's
            self._ring_id[:] = ident
            self._ring_len = 0
        at = self._ring_at + self._ring_len
        if self._ring_len == _RING:
            self._ring_at = (self._ring_at + 1) % _RING
        else:
            self._ring_len += 1
        struct.pack_into(_SLOT_FORMAT, self._ring, at % _RING * _SLOT, index & 0xFFFF, record,
                         player & 0xFF, max(-32768, min(32767, points)), to & 0xFF)
        return Link.send_event(self, index, record, player, points, to, now_ms, resent)

    def poll(self, now_ms):
        """One step of the network's work, then the first verified command (or NONE)."""
        try:
            self._step(now_ms)
        except (OSError, simple.MQTTException, Later, AssertionError, IndexError,
                TypeError, ValueError):
            self._drop(now_ms, _BROKER)
        if self._unreported and ticks_diff(now_ms, self._reported_at) >= _REPORT_MS:
            self._unreported = 0
            self._reported_at = now_ms
            self.send_error(_COMMAND_REFUSED, self.refused)
        kind = Link.poll(self, now_ms)
        if kind == _CMD_STATE:
            # The host asks for the full state: over MQTT that is the game's shots too,
            # since shots sent while it was away from the broker never reached it.
            self._resend_shots(now_ms)
        return kind

    def take_notice(self):
        code = self.notice
        self.notice = 0
        return code

    # -- the connection, a step per poll ----------------------------------------------------

    def _step(self, now_ms):
        state = self.state
        if state == _UP:
            if self.wlan.isconnected():
                self._serve(now_ms)
            else:
                self._drop(now_ms, 0)
        elif state == _WAIT:
            if ticks_diff(now_ms, self._since) >= self._wait_ms:
                self._enter(_JOIN, now_ms)
        elif state == _RESOLVE and self._addr is None:
            self._look_up(now_ms)
        elif state != _OFF:
            # on the way up: the steps are modules of their own, loaded for it, one at a
            # time: the connection's (netdial), the TLS handshake's (nettls), the login's
            # (netlogin)
            if state == _LOGIN or state == _SUBSCRIBE:
                name = "boardlib.netlogin"
            elif state == _HANDSHAKE:
                name = "boardlib.nettls"
            else:
                name = "boardlib.netdial"
            way = sys.modules.get(name)
            if way is None:
                for other in ("netdial", "nettls", "netlogin"):  # (left by a failed attempt)
                    forget(other)
                try:
                    __import__(name)
                except MemoryError:  # no room to connect now: tried again after a while
                    if state == _HANDSHAKE:
                        self._drop(now_ms, _LINK_MEMORY)  # (the TCP connection is open)
                    else:
                        self._fail(now_ms, _LINK_MEMORY)
                    return
                way = sys.modules[name]
            try:
                way.step(self, now_ms)
            except MemoryError:  # no room for this attempt: tried again after the back-off
                self._drop(now_ms, _LINK_MEMORY)  # (the board's heap, not the broker)

    def _enter(self, state, now_ms):
        self.state = state
        self._since = now_ms
        self._sent = False

    def _look_up(self, now_ms):
        """The broker's name looked up (boardlib/netdns.py), a step a poll, while the way
        up's code (netdial) is dropped: its address (a str) brings that back."""
        if not self.wlan.isconnected():
            self._drop(now_ms, _WIFI)  # (as netdial's steps do)
            return
        try:
            if self._resolver is None:
                from boardlib.netdns import Resolver

                self._resolver = Resolver()
                # (answers read into the stream's send buffer: no connection uses it now)
                bufs = self.bufs
                self._resolver.start(self.net["host"], self.wlan.ifconfig()[3], now_ms,
                                     buf=None if bufs is None else bufs[0])
                return
            address = self._resolver.step(now_ms)
        except MemoryError:  # no room for the lookup: the board's heap, not the name
            self._resolved()
            self._fail(now_ms, _LINK_MEMORY)
            return
        except OSError:
            self._resolved()
            self._fail(now_ms, _BROKER_NAME)
            return
        if address is not None:
            self._resolved()
            self._addr = address

    def _resolved(self):
        """The lookup is over: its module goes (the next lookup loads it again)."""
        if self._resolver is not None:
            self._resolver.close()
        self._resolver = None
        forget("netdns")

    def _resend_shots(self, now_ms):
        if self._ring_id != self.game_id:
            return  # a game since replaced by a new one: the host has its end
        for i in range(self._ring_len):
            shot = struct.unpack_from(_SLOT_FORMAT, self._ring,
                                      (self._ring_at + i) % _RING * _SLOT)
            Link.send_event(self, shot[0], shot[1], shot[2], shot[3], shot[4], now_ms)

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
        if ticks_diff(now_ms, self._pinged_at) >= _KEEPALIVE_S * 500:
            self._pinged_at = now_ms
            client.ping()
        sock.flush()
        if ticks_diff(self.clock(), sock.received_at) >= _KEEPALIVE_S * 1500:
            self._drop(now_ms, _BROKER)  # no answer to two pings: the broker is gone

    def _fail(self, now_ms, code):
        self.notice = self.last_error = code
        self._failures += 1
        wait = _BACKOFF_MS
        for _ in range(min(self._failures - 1, 5)):
            wait *= 2
        self._wait_ms = min(wait, _BACKOFF_MAX_MS)
        self._enter(_WAIT, now_ms)

    def _drop(self, now_ms, code):
        """Close the connection; `code` 0 when it was up (try again at once), else the
        error that ended the attempt."""
        was_up = self.state == _UP
        for sock in (self._ssl, self._raw_sock):
            if sock is not None:
                try:
                    sock.close()  # TLS: mbedtls's buffers go now, not at the next collection
                except (OSError, ValueError):
                    pass
        self._raw_sock = self._sock = self._poller = self._gate = self._ssl = None
        if self._resolver is not None:
            self._resolved()
        if code == _BROKER and self._named:
            self._addr = None  # looked up again: the broker may have moved
        self.client.sock = None
        self._outbox = []
        if was_up and not code:
            self._failures = 0
            self._wait_ms = 0
            self._enter(_WAIT, now_ms)
        elif was_up:
            self._failures = 0
            self._fail(now_ms, code)
        else:
            self._fail(now_ms, code or _WIFI)

    # -- frames and commands ----------------------------------------------------------------

    def write(self, wire):
        # A COBS frame from the Link (its stream's write): 0x00, the code byte, then the
        # kind (never 0, so COBS leaves it as it is).
        counter = self.counter
        self.counter = counter + 1
        kind = wire[2]
        # Sealed here, not in a method of its own: a frame's send saves a call.
        if kind == _HELLO and self.state != _UP:
            message = bytearray(len(wire) + OVERHEAD)
            self._signer.seal(counter, wire, message)
            self._greeting = message  # waits for the first connection
            return
        if self.state != _UP and self.state != _SUBSCRIBE:
            self.dropped += 1
            return
        outbox = self._outbox
        if len(outbox) == _OUTBOX:
            outbox.pop(0)
            self.dropped += 1
        message = bytearray(len(wire) + OVERHEAD)  # the message itself waits in the outbox
        self._signer.seal(counter, wire, message)
        outbox.append((self.topic_state if kind == _STATE else self.topic_events, message))

    def _message(self, topic, msg):
        if topic != self.topic_cmd:
            return
        if 8 + 7 + _TAG <= len(msg) <= _MAX_CMD and self._signer.check(msg):
            counter = int.from_bytes(msg[:8], "little")
            if counter > self._last_counter:
                self._last_counter = counter
                frame = memoryview(msg)[8:-_TAG]
                at = self._cmd_len
                if at + len(frame) <= _COMMAND_BUF:  # else lost, as on a full serial line
                    self._cmd[at:at + len(frame)] = frame
                    self._cmd_len = at + len(frame)
                return
            # else a replay, or an old command overtaken by a newer one
        self.refused += 1
        self._unreported += 1

    def readinto(self, buf):
        # The Link's read of its stream: the commands proven, as they came (an idle poll
        # asks too, and must allocate nothing)
        n = min(len(buf), self._cmd_len)
        if not n:
            return 0
        buf[:n] = self._cmd[:n]
        self._cmd[:self._cmd_len - n] = self._cmd[n:self._cmd_len]
        self._cmd_len -= n
        return n

