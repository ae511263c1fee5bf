"""The network link's way up: loaded by the link when it has to (re)connect, and dropped
once it is up (boardlib/mqttlink.py), so that a playing board's heap does not hold it.

    from boardlib import netdial
    netdial.step(link, now_ms)     # each poll while the link is not up: one small step

The steps, each within a poll and each with a deadline: join the WiFi, look the broker's
name up (boardlib/netdns.py, loaded for the lookup alone), the TCP connect, the TLS handshake
(boardlib/nettls.py), then MQTT's CONNECT and SUBSCRIBE, each answer taken in a later poll.

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

import errno
import select
import socket as _socket
import sys
from binascii import hexlify

from umqtt import simple

from boardlib.netstream import (
    DIAL,
    HANDSHAKE,
    JOIN,
    LOGIN,
    RESOLVE,
    SUBSCRIBE,
    UP,
    Later,
    Stream,
    buffers,
    forget,
)

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
_TLS_MEMORY = const(76)
_JOIN_MS = const(15000)  # a WiFi join that takes longer has failed
# A join's failure reason counts from this long after connect(): the ESP32 keeps the last
# failure's reason until a new one comes (ports/esp32/network_wlan.c, 1.22+), so at the
# first polls of a new join, status() may still report the one before.
_REASON_MS = const(5000)
_DIAL_MS = const(5000)  # a TCP connect that takes longer has failed
# The broker's answer to CONNECT or SUBSCRIBE: a power-saving WiFi delays each packet by up
# to a DTIM interval (100 ms and more); a busy club network or broker more.
_REPLY_MS = const(10000)
_CONNACK = const(4)  # bytes of the broker's answers: CONNACK, SUBACK
_SUBACK = const(5)
_RECORD = const(1)  # Stream's modes (netstream)
_REPLAY = const(2)
_NORMAL = const(0)

_stream = [None]  # the stream socket() gives umqtt during its connect()


def step(link, now_ms):
    state = link.state
    if state != JOIN and not link.wlan.isconnected():
        link._drop(now_ms, _WIFI)
    elif state == JOIN:
        _join(link, now_ms)
    elif state == RESOLVE:
        _resolve(link, now_ms)
    elif state == DIAL:
        _dial(link, now_ms)
    elif state == HANDSHAKE:
        sys.modules["boardlib.nettls"].handshake(link, now_ms)
    elif state == LOGIN:
        login(link, now_ms)
    else:
        _subscribe(link, now_ms)


def _join(link, now_ms):
    wlan = link.wlan
    if wlan.isconnected():
        link._joining = False
        _open(link, now_ms)
        return
    if not link._joining:
        link._joining = True
        link._since = now_ms
        try:
            wlan.connect(link.net["ssid"], link.net["password"])
        except OSError:
            pass  # the ESP32 refuses while its driver is still joining: wait for that
        return
    status = wlan.status()
    waited = ticks_diff(now_ms, link._since)
    if (0 < status < 1000 and waited >= _REASON_MS) or waited >= _JOIN_MS:
        # below 1000: the ESP32's reason the join failed (no such AP, wrong password)
        link._joining = False
        try:
            wlan.disconnect()
        except OSError:
            pass
        link._fail(now_ms, _WIFI)


def _open(link, now_ms):
    host = link.net["host"]
    if link._addr is None and link._named:
        # A name: looked up over UDP a step a poll (the port's getaddrinfo() blocks), by
        # the link itself (boardlib.netdns), while this module is dropped: the two are
        # never held at once. The address found brings this module back (_resolve).
        link._enter(RESOLVE, now_ms)
        forget("netdial")
        return
    addr = link._addr
    if addr is None or isinstance(addr, str):  # an address given, or looked up: no lookup
        link._addr = _socket.getaddrinfo(addr or host, link.net["port"])[0][-1]
    sock = _socket.socket()
    sock.setblocking(False)
    try:
        sock.connect(link._addr)
    except OSError as exc:
        if exc.args[0] not in (errno.EINPROGRESS, errno.EAGAIN):
            sock.close()
            link._fail(now_ms, _BROKER)
            return
    link._raw_sock = sock
    link._poller = select.poll()
    link._poller.register(sock, select.POLLOUT)
    link._enter(DIAL, now_ms)


def _resolve(link, now_ms):
    """The link has looked the broker's name up (its address in link._addr): connect."""
    _open(link, now_ms)


def _dial(link, now_ms):
    for _, events in link._poller.ipoll(0):
        if events & (select.POLLERR | select.POLLHUP):
            link._drop(now_ms, _BROKER)
            return
        if events & select.POLLOUT:
            if link.net["tls"]:
                try:
                    from boardlib import nettls
                except MemoryError:
                    link._drop(now_ms, _TLS_MEMORY)
                    return
                nettls.start(link, now_ms)
                return
            link._sock = Stream(link._raw_sock, link.clock, bufs=buffers_of(link))
            link._enter(LOGIN, now_ms)
            login(link, now_ms)  # CONNECT goes at once
            return
    if ticks_diff(now_ms, link._since) >= _DIAL_MS:
        link._drop(now_ms, _BROKER)


def buffers_of(link):
    """The link's stream buffers: made at its first connection (not at power-up, when the
    application and its game still have to come), then kept and used by every connection
    (boardlib.netstream.buffers)."""
    if link.bufs is None:
        link.bufs = buffers()
    return link.bufs


def _ask(link, now_ms, answer, call):
    """A umqtt call that sends a packet and reads the broker's `answer` bytes, over two
    polls or more: call(link, True) is sent (recorded), call(link, False) made again once
    the answer is here (replayed). True when it has returned; False while waiting (or
    dropped: no answer within _REPLY_MS)."""
    sock = link._sock
    if not link._sent:
        link._sent = True
        sock.mode = _RECORD
        sock.rec_len = 0
        try:
            call(link, True)
        except Later:
            sock.mode = _NORMAL
            return False  # sent: the broker answers in a later poll
    elif sock.has(answer):
        sock.mode = _REPLAY
        sock.replayed = 0
        call(link, False)
        if sock.replayed != sock.rec_len:
            raise ValueError("umqtt wrote another packet the second time")
    else:
        sock.flush()
        if ticks_diff(now_ms, link._since) >= _REPLY_MS:
            link._drop(now_ms, _BROKER)
        return False
    sock.mode = _NORMAL
    return True


def socket(*args):
    return _stream[0]


def getaddrinfo(host, port, *args):
    return [(2, 1, 0, "", (host, port))]  # AF_INET, SOCK_STREAM: unused by the stream


def _connect(link, first):
    _connect_through(simple, link)


def _connect_through(umqtt, link):
    """umqtt's connect() over the link's stream: its `socket` is this module meanwhile."""
    saved = umqtt.socket
    umqtt.socket = sys.modules[__name__]
    _stream[0] = link._sock
    try:
        link.client.sock = None  # umqtt 1.7+ closes an old socket first
        link.client.connect()
    finally:
        umqtt.socket = saved
        _stream[0] = None


def _send_subscribe(link, first):
    client = link.client
    if first:
        link._pid = client.pid
    else:
        client.pid = link._pid  # the same packet id as the first time
    client.subscribe(link.topic_cmd)


def login(link, now_ms):
    """CONNECT in one poll, the CONNACK taken in a later one."""
    try:
        if not _ask(link, now_ms, _CONNACK, _connect):
            return
    except simple.MQTTException:  # 4: bad user name or password, 5: not authorised
        link._drop(now_ms, _BROKER_LOGIN)
        return
    link._enter(SUBSCRIBE, now_ms)
    _subscribe(link, now_ms)


def _subscribe(link, now_ms):
    """SUBSCRIBE in one poll, the SUBACK taken in a later one; then the link is up, and
    this module goes."""
    if not _ask(link, now_ms, _SUBACK, _send_subscribe):
        return
    link._sock.rec = None  # what the replays checked against: not needed once up
    link._enter(UP, now_ms)
    forget("netdial")
    _up(link, now_ms)


def _up(link, now_ms):
    """Subscribed: the link is up. The status, the waiting hello, the game's last shots
    and its state go out. (Here, not in the link: it runs once a connection.)"""
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
