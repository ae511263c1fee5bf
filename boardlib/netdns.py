"""A broker's name looked up without blocking: imported by the network link only while it
looks a name up, and dropped once it has the address (boardlib/mqttlink.py).

    from boardlib.netdns import Resolver
    resolver = Resolver(); resolver.start(name, dns_server, now_ms)
    address = resolver.step(now_ms)      # None while waiting, OSError on failure

DNS (RFC 1035): a query for the A record of a name, to the WiFi's DNS server, or to the mDNS
group for a `.local` name (RFC 6762: a query from a port other than 5353 is answered to that
port, "legacy unicast").
"""

import errno
import os
import select

try:
    from time import ticks_diff
except ImportError:  # CPython: boardlib.ticks wraps as the ESP32 does
    from boardlib.ticks import ticks_diff

try:
    from micropython import const
except ImportError:  # CPython: the integer itself
    const = int

_DNS_PORT = const(53)
_MDNS_PORT = const(5353)
_TRY_MS = const(1500)  # lwIP waits 1, 2, 3 s between its tries; one try here
_TRIES = const(3)
_ANSWER = const(512)  # the longest DNS message over UDP (RFC 1035, 4.2.1)


class Resolver:
    """A name's IPv4 address from one DNS query over UDP a try, without blocking: the
    ESP32's getaddrinfo() blocks the whole firmware for as long as lwIP tries (about 7 s a
    DNS server, up to 3 servers; 5 s of mDNS for `.local`: ports/esp32/modsocket.c), which
    the watchdog does not survive. `start()` sends the query; each `step()` reads the
    answer if it came, sends again after _TRY_MS, and raises OSError(ETIMEDOUT) after
    _TRIES tries (or OSError(ENOENT) when the server says there is no such name)."""

    def __init__(self):
        self.sock = None  # the rest is start()'s

    def start(self, name, server, now_ms, port=0, buf=None):
        """port: the DNS server's, when not 53 (or mDNS's 5353 for a `.local` name); buf:
        512 bytes to read the answers into (the network link lends its stream's, free
        while it looks a name up; else one is made here)."""
        import socket

        self.close()
        self.name = name
        local = name.endswith(".local")
        # mDNS's group (RFC 6762), else the DNS server
        where = ("224.0.0.251", _MDNS_PORT) if local else (server, _DNS_PORT)
        if port:
            where = (server, port)
        self.server = socket.getaddrinfo(where[0], where[1])[0][-1]  # an address: no lookup
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        sock.setblocking(False)
        self.sock = sock
        self.buf = buf if buf is not None else bytearray(_ANSWER)
        # asked before each read: a poll that finds no answer allocates nothing
        self.poller = select.poll()
        self.poller.register(sock, select.POLLIN)
        self.tries = 0
        self._send(now_ms)

    def _send(self, now_ms):
        ident = os.urandom(2)
        self.ident = ident[0] << 8 | ident[1]
        query = bytearray(ident + b"\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00")  # RD, 1 question
        for label in self.name.split("."):
            query.append(len(label))
            query.extend(label.encode())
        query.extend(b"\x00\x00\x01\x00\x01")  # root, type A, class IN
        self.tries += 1
        self.sent_at = now_ms
        try:
            self.sock.sendto(query, self.server)
        except OSError as exc:
            if exc.args[0] != errno.EAGAIN:
                raise

    def step(self, now_ms):
        sock = self.sock
        while True:
            for _ in self.poller.ipoll(0):
                break
            else:
                break  # nothing has come
            try:
                got = sock.readinto(self.buf)  # a datagram, cut at the buffer's length
            except OSError as exc:
                if exc.args[0] != errno.EAGAIN:
                    raise
                break
            if got is None:
                break
            # The first A record of an answer to our query; anything else is passed over.
            msg = memoryview(self.buf)[:got]
            if len(msg) < 12 or (msg[0] << 8 | msg[1]) != self.ident or not msg[2] & 0x80:
                continue  # not the answer to this query
            if msg[3] & 0x0F == 3:
                self.close()
                raise OSError(errno.ENOENT)  # NXDOMAIN: no such name
            at = 12
            questions = msg[4] << 8 | msg[5]  # echoed, before the answers
            for record in range(questions + (msg[6] << 8 | msg[7])):
                while at < len(msg):  # the record's name: labels, to an empty one or a pointer
                    size = msg[at]
                    if size & 0xC0 == 0xC0:
                        at += 2  # a pointer ends the name
                        break
                    at += 1 + size
                    if not size:
                        break
                if record < questions:
                    at += 4  # the question's type and class
                    continue
                if at + 10 > len(msg):
                    break
                kind = msg[at] << 8 | msg[at + 1]
                size = msg[at + 8] << 8 | msg[at + 9]
                at += 10
                if kind == 1 and size == 4 and at + 4 <= len(msg):
                    address = "%d.%d.%d.%d" % (msg[at], msg[at + 1], msg[at + 2], msg[at + 3])
                    self.close()
                    return address
                at += size
        if ticks_diff(now_ms, self.sent_at) >= _TRY_MS:
            if self.tries >= _TRIES:
                self.close()
                raise OSError(errno.ETIMEDOUT)
            self._send(now_ms)
        return None

    def close(self):
        if self.sock is not None:
            try:
                self.sock.close()
            except OSError:
                pass
            self.sock = None
            self.poller = None

