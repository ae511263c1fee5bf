"""The network link's way to the broker: loaded by the link when it has to (re)connect,
and dropped once the TCP connection is made (boardlib/mqttlink.py), so that a playing
board's heap does not hold it.

    from boardlib import netdial
    netdial.step(link, now_ms)     # each poll while the link is on its way: one small step

The steps, each within a poll and each with a deadline: join the WiFi, the TCP connect to
the broker's address (its name looked up by the link itself, boardlib/netdns.py, while this
module is dropped). Then the TLS handshake is boardlib/nettls.py's (a TLS board's), and
MQTT's CONNECT and SUBSCRIBE are boardlib/netlogin.py's, each loaded once the one before
is dropped: the link never holds two at once (docs/performance.md, "The network link's
heap", "The TLS handshake's code only while it runs").
"""

import errno
import select
import socket as _socket

from boardlib.netstream import Stream, buffers_of, forget

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
_LINK_MEMORY = const(76)
# ESP-IDF's ESP_ERR_NO_MEM, which `WLAN.active(True)` raises when the WiFi driver finds no
# room in the ESP-IDF heap (the GC heap may have grown into it: docs/esp32.md)
_ESP_ERR_NO_MEM = const(0x101)
_JOIN_MS = const(15000)  # a WiFi join that takes longer has failed
# A join's failure reason counts from this long after connect(): the ESP32 keeps the last
# failure's reason until a new one comes (ports/esp32/network_wlan.c, 1.22+), so at the
# first polls of a new join, status() may still report the one before.
_REASON_MS = const(5000)
_DIAL_MS = const(5000)  # a TCP connect that takes longer has failed
# The link's states used here (boardlib/netstream.py names them all).
_JOIN = const(1)
_DIAL = const(2)
_LOGIN = const(3)
_HANDSHAKE = const(7)
_RESOLVE = const(8)


def step(link, now_ms):
    state = link.state
    wlan = link.wlan
    if state == _JOIN:
        if wlan.isconnected():
            link._joining = False
            _open(link, now_ms)
        elif not link._joining:
            if not wlan.active():  # the WiFi driver did not start at power-up: again
                try:
                    wlan.active(True)
                except OSError as exc:
                    link._fail(now_ms, _LINK_MEMORY if exc.errno == _ESP_ERR_NO_MEM
                               else _WIFI)
                    return
            link._joining = True
            link._since = now_ms
            try:
                wlan.connect(link.net["ssid"], link.net["password"])
            except OSError:
                pass  # the ESP32 refuses while its driver is still joining: wait for that
        else:
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
    elif not wlan.isconnected():
        link._drop(now_ms, _WIFI)
    elif state == _RESOLVE:
        _open(link, now_ms)  # the link has looked the broker's name up (link._addr): connect
    else:  # DIAL: the TCP connect's outcome
        for _, events in link._poller.ipoll(0):
            if events & (select.POLLERR | select.POLLHUP):
                link._drop(now_ms, _BROKER)
                return
            if events & select.POLLOUT:
                if link.net["tls"]:
                    # the handshake is boardlib/nettls.py's, loaded by the link once this
                    # module is dropped: the two are never held at once
                    link._enter(_HANDSHAKE, now_ms)
                else:
                    link._sock = Stream(link._raw_sock, link.clock, bufs=buffers_of(link))
                    link._enter(_LOGIN, now_ms)  # CONNECT goes at the next poll (netlogin)
                forget("netdial")
                return
        if ticks_diff(now_ms, link._since) >= _DIAL_MS:
            link._drop(now_ms, _BROKER)


def _open(link, now_ms):
    host = link.net["host"]
    if link._addr is None and link._named:
        # A name: looked up over UDP a step a poll (the port's getaddrinfo() blocks), by
        # the link itself (boardlib.netdns), while this module is dropped: the two are
        # never held at once. The address found brings this module back (step: _open).
        link._enter(_RESOLVE, now_ms)
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
    link._enter(_DIAL, now_ms)
