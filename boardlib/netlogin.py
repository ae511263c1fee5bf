"""The network link's login: MQTT's CONNECT and SUBSCRIBE over a connection made by
boardlib/netdial.py, loaded by the link once that module is dropped, and dropped in turn
once the link is up (boardlib/mqttlink.py).

    from boardlib import netlogin
    netlogin.step(link, now_ms)    # each poll while the broker's answers are awaited

umqtt.simple is written for blocking sockets: its `connect()` and `subscribe()` send a
packet and then read the broker's answer. `netstream.Stream` lets them do that in two polls
without waiting in either (docs/network.md, "Replies"): the first call is *recorded* (what
umqtt writes is sent, and its read of the answer raises `Later` when the answer is not there
yet); once the answer has arrived, the same call is *replayed*: what it writes must be the
very bytes sent the first time (they are not sent again), and its read gets the answer. So a
reply may take as long as a power-saving WiFi takes (100 ms and more) while play goes on.

The one change made to umqtt: `umqtt.simple.connect()` opens its socket through the
module's name `socket` (`socket.socket()`, `socket.getaddrinfo()`, `sock.connect()`);
for the length of that one call the name is this module, whose `socket()` gives the link's
stream, already connected without blocking. umqtt 1.3.4 to 1.8.0 (the versions MicroPython
1.22 to 1.29 freeze) all open their socket that way; the tests run the link against each
(tests/test_net_versions.py).
"""

import sys
from binascii import hexlify

from umqtt import simple

from boardlib.netstream import Later, forget

try:
    from time import ticks_diff
except ImportError:  # CPython: boardlib.ticks wraps as the ESP32 does
    from boardlib.ticks import ticks_diff

try:
    from micropython import const
except ImportError:  # CPython: the integer itself
    const = int

# The error codes reported here (firmware/errors.py lists every code; tests/test_board_codes.py).
_WIFI = const(71)
_BROKER = const(72)
_BROKER_LOGIN = const(73)
# The broker's answer to CONNECT or SUBSCRIBE: a power-saving WiFi delays each packet by up
# to a DTIM interval (100 ms and more); a busy club network or broker more.
_REPLY_MS = const(10000)
_CONNACK = const(4)  # bytes of the broker's answers: CONNACK, SUBACK
_SUBACK = const(5)
_RECORD = const(1)  # Stream's modes (netstream)
_REPLAY = const(2)
_NORMAL = const(0)
# The link's states used here (boardlib/netstream.py names them all).
_LOGIN = const(3)
_SUBSCRIBE = const(4)
_UP = const(5)

_stream = [None]  # the stream socket() gives umqtt during its connect()


def step(link, now_ms):
    if not link.wlan.isconnected():
        link._drop(now_ms, _WIFI)
        return
    if link.state == _LOGIN:
        # CONNECT in one poll, the CONNACK taken in a later one
        try:
            if not _ask(link, now_ms, _CONNACK):
                return
        except simple.MQTTException:  # 4: bad user name or password, 5: not authorised
            link._drop(now_ms, _BROKER_LOGIN)
            return
        link._enter(_SUBSCRIBE, now_ms)
    # SUBSCRIBE in one poll (the CONNACK's, or a later one), the SUBACK taken in a later
    # one; then the link is up, and this module goes.
    if not _ask(link, now_ms, _SUBACK):
        return
    link._sock.rec = None  # what the replays checked against: not needed once up
    link._enter(_UP, now_ms)
    forget("netlogin")
    # Subscribed: the link is up. The status, the waiting hello, the game's last shots and
    # its state go out. (Here, not in the link: it runs once a connection.)
    sock = link._sock
    client = link.client
    link._failures = 0
    link.connects += 1
    link._pinged_at = now_ms
    client.publish(link.topic_status, b"online " + hexlify(link.nonce), True)
    if link._greeting is not None:
        client.publish(link.topic_events, link._greeting)
        link._greeting = None
    sock.flush()
    link._resend_shots(now_ms)
    if link._state is not None:
        link.send_state(link._state[0], now_ms, link._state[1])


def _ask(link, now_ms, answer):
    """The umqtt call of the link's state (`_send`) that sends a packet and reads the
    broker's `answer` bytes, over two polls or more: _send(link, True) is sent (recorded),
    _send(link, False) made again once the answer is here (replayed). True when it has
    returned; False while waiting (or dropped: no answer within _REPLY_MS)."""
    sock = link._sock
    if not link._sent:
        link._sent = True
        sock.mode = _RECORD
        sock.rec_len = 0
        try:
            _send(link, True)
        except Later:
            sock.mode = _NORMAL
            return False  # sent: the broker answers in a later poll
    else:
        # the answer's bytes, read from the socket if need be (the login alone asks this
        # of the stream, so it is not a method the link holds)
        while sock.rx_len < answer and sock._fill():
            pass
        if sock.rx_len < answer:
            sock.flush()
            if ticks_diff(now_ms, link._since) >= _REPLY_MS:
                link._drop(now_ms, _BROKER)
            return False
        sock.mode = _REPLAY
        sock.replayed = 0
        _send(link, False)
        if sock.replayed != sock.rec_len:
            raise ValueError("umqtt wrote another packet the second time")
    sock.mode = _NORMAL
    return True


def socket(*args):
    return _stream[0]


def getaddrinfo(host, port, *args):
    return [(2, 1, 0, "", (host, port))]  # AF_INET, SOCK_STREAM: unused by the stream


def _send(link, first):
    """CONNECT or SUBSCRIBE, as the link's state says, through umqtt (`first`: recorded,
    else replayed)."""
    client = link.client
    if link.state == _LOGIN:
        # umqtt's connect() over the link's stream: umqtt.simple's `socket` (its import of
        # the socket module, which the published stubs leave out) is this module meanwhile
        saved = simple.socket  # type: ignore[attr-defined]
        simple.socket = sys.modules[__name__]  # type: ignore[attr-defined]
        _stream[0] = link._sock
        try:
            client.sock = None  # umqtt 1.7+ closes an old socket first
            client.connect()
        finally:
            simple.socket = saved  # type: ignore[attr-defined]
            _stream[0] = None
    else:
        if first:
            link._pid = client.pid
        else:
            client.pid = link._pid  # the same packet id as the first time
        client.subscribe(link.topic_cmd)
