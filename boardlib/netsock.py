"""The network link's plumbing: the stream umqtt talks through, the TLS gate, the TLS
context on every supported MicroPython release, and a broker name resolved without blocking.

    from boardlib import netsock
    stream = netsock.Stream(sock, clock, tls=False)   # what umqtt.simple reads and writes
    netsock.umqtt_connect(simple, client, stream)      # umqtt's connect() over that stream
    gate = netsock.Gate(raw_socket)                    # mbedtls reads a record a poll
    context = netsock.tls_context(ca_der, cipher)      # `tls` (1.23+) or `ssl` (1.22)
    resolver = netsock.Resolver(); resolver.start(name, dns_server, now_ms)
    address = resolver.step(now_ms)                    # None while waiting, OSError on failure

Nothing here waits. umqtt.simple is written for blocking sockets: its `connect()` and
`subscribe()` send a packet and then read the broker's answer. `Stream` lets them do that
in two polls without waiting in either (docs/network.md, "Replies"): the first call is
*recorded* (what umqtt writes is sent, and its read of the answer raises `Later` when the
answer is not there yet); once the answer has arrived, the same call is *replayed*: what it
writes must be the very bytes sent the first time (they are not sent again), and its read
gets the answer. So a reply may take as long as a power-saving WiFi takes (100 ms and more)
while play goes on.

The one change made to umqtt: `umqtt.simple.connect()` opens its socket through the
module's name `socket` (`socket.socket()`, `socket.getaddrinfo()`, `sock.connect()`);
`umqtt_connect` points that name at a dialer for the length of that one call, so that
connect() gets the link's stream, already connected without blocking. umqtt 1.3.4 to 1.8.0
(the versions MicroPython 1.22 to 1.29 freeze) all open their socket that way; the tests
run the link against each (tests/test_net_versions.py).

TLS on the ESP32 is mbedtls (extmod/modtls_mbedtls.c, `ssl` in extmod/modssl_mbedtls.c
before 1.23): a write that mbedtls could not finish (the socket pushed back) has made a
record of the bytes it was given, and the next write must hand it the same length: it then
sends the rest of that record and reports that length sent, whatever else the buffer holds
by then (mbedtls `ssl_write_real`). So `Stream` writes exactly the same length again after
a TLS write that pushed back, and only then the bytes queued behind it. The streams' own
`readinto`/`write` are used throughout: an `SSLSocket` has `recv`/`send` only from 1.25.
"""

import errno
import io
import os
import select

from boardlib.ticks import ticks_add, ticks_diff

try:
    from micropython import const
except ImportError:  # CPython: the integer itself
    const = int


_TX_BUF = const(1024)
_RX_BUF = const(256)
_REC_BUF = const(320)  # a CONNECT: client id, last will, user and password (netconfig limits)
_POLL = const(3)  # MicroPython's stream ioctl requests: poll, close
_CLOSE = const(4)
_TLS_HEADER = const(5)  # record header: type, version (2), length (2)
_CHANGE_CIPHER_SPEC = const(20)
_HANDSHAKE_RECORD = const(22)
_NORMAL = const(0)
_RECORD = const(1)
_REPLAY = const(2)
# mbedtls's "out of memory" (MBEDTLS_ERR_SSL_ALLOC_FAILED, and the bignum's and X.509's)
TLS_NO_MEMORY = (-0x7F00, -0x0010, -0x2880, errno.ENOMEM)

# DNS (RFC 1035): a query for the A record of a name, to the WiFi's DNS server, or to the
# mDNS group for a `.local` name (RFC 6762: a query from a port other than 5353 is answered
# to that port, "legacy unicast").
DNS_PORT = const(53)
MDNS_GROUP = "224.0.0.251"
MDNS_PORT = const(5353)
DNS_TRY_MS = const(1500)  # lwIP waits 1, 2, 3 s between its tries; one try here
DNS_TRIES = const(3)


class Later(Exception):
    """umqtt read an answer that has not arrived yet (the call is replayed when it has)."""


class Stream:
    """What umqtt.simple reads and writes: a connected non-blocking socket with buffers.

    write() never blocks: bytes go to a buffer that flush() drains as far as the socket
    takes them (OSError when the buffer is full: the connection is dropped). read(n) gives
    n bytes that have arrived; in blocking mode (umqtt's) a read of bytes that are not there
    yet raises Later: nothing ever waits. `ready()` says whether a whole MQTT packet has
    arrived, so that `check_msg()` is called only then."""

    def __init__(self, sock, clock, tls=False):
        self.sock = sock
        self.clock = clock
        self.tls = tls
        self.poller = select.poll()
        self.poller.register(sock, select.POLLIN)
        self.tx = bytearray(_TX_BUF)
        self.tx_len = 0
        self.retry = 0  # TLS: the length of the write mbedtls has begun
        self.rx = bytearray(_RX_BUF)
        self.rx_len = 0
        self.blocking = True
        self.received_at = clock()
        self.rec = bytearray(_REC_BUF)
        self.rec_len = 0
        self.mode = _NORMAL
        self.replayed = 0

    # -- what umqtt calls -------------------------------------------------------------------

    def setblocking(self, flag):
        self.blocking = flag

    def settimeout(self, seconds):
        pass  # umqtt 1.5+ asks for one in connect(); nothing here waits

    def connect(self, addr):
        pass  # already connected, without blocking, by the link

    def close(self):
        pass  # the link closes the real socket (umqtt 1.7+ closes an old one in connect())

    def write(self, buf, length=None):
        if isinstance(buf, str):
            buf = buf.encode()
        if length is None:
            length = len(buf)
        if self.mode == _REPLAY:
            at = self.replayed
            if at + length > self.rec_len or self.rec[at:at + length] != buf[:length]:
                raise ValueError("umqtt wrote other bytes the second time")
            self.replayed = at + length
            return length
        if self.tx_len + length > _TX_BUF:
            raise OSError(errno.ENOBUFS)
        if self.mode == _RECORD:
            if self.rec_len + length > _REC_BUF:
                raise OSError(errno.ENOBUFS)
            self.rec[self.rec_len:self.rec_len + length] = buf[:length]
            self.rec_len += length
        self.tx[self.tx_len:self.tx_len + length] = buf[:length]
        self.tx_len += length
        # Not sent yet: umqtt writes a packet in pieces, and small pieces each on the wire
        # would wait for the broker's delayed ACK (Nagle). flush() sends them in one go.
        return length

    def read(self, n):
        self.flush()  # what umqtt wrote is what the broker is to answer
        while self.rx_len < n and self._fill():
            pass
        if self.rx_len < n:
            if not self.blocking and self.rx_len == 0:
                return None
            raise Later()
        out = bytes(self.rx[:n])
        self.rx[:self.rx_len - n] = self.rx[n:self.rx_len]
        self.rx_len -= n
        return out

    # -- what the link calls ----------------------------------------------------------------

    def record(self):
        """The umqtt call that follows is the first of two: its writes are kept."""
        self.mode = _RECORD
        self.rec_len = 0

    def replay(self):
        """The umqtt call that follows repeats the recorded one, now that its answer is
        here: its writes are checked against the first call's, not sent again."""
        self.mode = _REPLAY
        self.replayed = 0

    def done(self):
        """After a replay: True when the call wrote exactly what the first one did."""
        whole = self.mode != _REPLAY or self.replayed == self.rec_len
        self.mode = _NORMAL
        return whole

    def has(self, n):
        """True when n bytes from the broker are here (read from the socket if need be)."""
        while self.rx_len < n and self._fill():
            pass
        return self.rx_len >= n

    def room(self):
        return _TX_BUF - self.tx_len

    def flush(self):
        n = self.retry or self.tx_len
        if not n:
            return
        try:
            sent = self.sock.write(memoryview(self.tx)[:n])
        except OSError as exc:
            if exc.args[0] != errno.EAGAIN:
                raise
            sent = None
        if sent is None:  # the socket pushed back
            if self.tls:
                self.retry = n  # mbedtls made a record of these n bytes: n again, no more
            return
        self.retry = 0
        if sent:
            self.tx[:self.tx_len - sent] = self.tx[sent:self.tx_len]
            self.tx_len -= sent

    def ready(self):
        """True when a whole MQTT packet from the broker is here. An idle call asks the
        poller only: no exception, no bytes object, nothing allocated."""
        if self.rx_len < 2:
            for _ in self.poller.ipoll(0):
                break
            else:
                return False
            if not self._fill() and self.rx_len < 2:
                return False
        return self._whole()

    def _whole(self):
        # fixed header: type, then the remaining length in 1-4 bytes of 7 bits (MQTT 2.2.3)
        rx = self.rx
        length = shift = 0
        at = 1
        while True:
            if at >= self.rx_len:
                if self._fill():
                    continue
                return False
            byte = rx[at]
            length |= (byte & 0x7F) << shift
            at += 1
            if not byte & 0x80:
                break
            shift += 7
            if shift > 21:
                raise OSError(errno.EIO)  # no MQTT length is that long
        total = at + length
        if total > _RX_BUF:
            raise OSError(errno.ENOBUFS)  # no command is that long: not the broker
        while self.rx_len < total:
            if not self._fill():
                return False
        return True

    def _fill(self):
        if self.rx_len >= _RX_BUF:
            return False
        got = self.sock.readinto(memoryview(self.rx)[self.rx_len:])
        if got is None:
            return False
        if not got:
            raise OSError(errno.ECONNRESET)  # the broker closed the connection
        self.rx_len += got
        self.received_at = self.clock()
        return True


class _Dialer:
    """Stands in for the socket module inside umqtt.simple while its connect() runs: the
    socket it opens is the link's stream, the address it looks up is not looked up."""

    def __init__(self):
        self.stream = None

    def socket(self, *args):
        return self.stream

    def getaddrinfo(self, host, port, *args):
        return [(2, 1, 0, "", (host, port))]  # AF_INET, SOCK_STREAM: unused by the stream


_DIALER = _Dialer()


def umqtt_connect(simple, client, stream):
    """client.connect() over `stream` (umqtt.simple's `socket` is the dialer for this one
    call, then the module's own again)."""
    saved = simple.socket
    _DIALER.stream = stream
    simple.socket = _DIALER
    try:
        client.sock = None  # umqtt 1.7+ closes an old socket first
        return client.connect()
    finally:
        simple.socket = saved
        _DIALER.stream = None


class Gate(io.IOBase):
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


def tls_context(ca, cipher):
    """A client context that checks the broker's certificate against the CA certificate
    `ca` (DER) and offers the one `cipher`: MicroPython 1.23+ names the module `tls` and
    takes the CA as `load_verify_locations(cadata)`; 1.22 names it `ssl` and takes
    `load_verify_locations(cafile=None, *, cadata=None)` (extmod/modssl_mbedtls.c, v1.22.0).
    ImportError on a MicroPython without either."""
    try:
        import tls
    except ImportError:
        import ssl as tls  # type: ignore[no-redef]
    context = tls.SSLContext(tls.PROTOCOL_TLS_CLIENT)
    try:
        context.load_verify_locations(cadata=ca)
    except TypeError:  # 1.23+: the C function takes the data alone
        context.load_verify_locations(ca)
    context.verify_mode = tls.CERT_REQUIRED  # type: ignore[attr-defined]
    context.set_ciphers([cipher])
    return context


def is_address(host):
    """True for a dotted IPv4 address (looked up by nobody)."""
    parts = host.split(".")
    if len(parts) != 4:
        return False
    for part in parts:
        if not part or len(part) > 3 or not part.isdigit() or int(part) > 255:
            return False
    return True


class Resolver:
    """A name's IPv4 address from one DNS query over UDP a try, without blocking: the
    ESP32's getaddrinfo() blocks the whole firmware for as long as lwIP tries (about 7 s a
    DNS server, up to 3 servers; 5 s of mDNS for `.local`: ports/esp32/modsocket.c), which
    the watchdog does not survive. `start()` sends the query; each `step()` reads the
    answer if it came, sends again after DNS_TRY_MS, and raises OSError(ETIMEDOUT) after
    DNS_TRIES tries (or OSError(ENOENT) when the server says there is no such name)."""

    def __init__(self):
        self.sock = None
        self.name = ""
        self.server = None
        self.sent_at = 0
        self.tries = 0
        self.ident = 0

    def start(self, name, server, now_ms, port=0):
        """port: the DNS server's, when not 53 (or mDNS's 5353 for a `.local` name)."""
        import socket

        self.close()
        self.name = name
        local = name.endswith(".local")
        where = (MDNS_GROUP, MDNS_PORT) if local else (server, DNS_PORT)
        if port:
            where = (server, port)
        self.server = socket.getaddrinfo(where[0], where[1])[0][-1]  # an address: no lookup
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        sock.setblocking(False)
        self.sock = sock
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
        self.sent_at = ticks_add(now_ms, DNS_TRY_MS)
        try:
            self.sock.sendto(query, self.server)
        except OSError as exc:
            if exc.args[0] != errno.EAGAIN:
                raise

    def step(self, now_ms):
        sock = self.sock
        while True:
            try:
                answer = sock.recv(512)
            except OSError as exc:
                if exc.args[0] != errno.EAGAIN:
                    raise
                break
            if answer is None:
                break
            address = self._address(answer)
            if address is not None:
                self.close()
                return address
        if ticks_diff(now_ms, self.sent_at) >= 0:
            if self.tries >= DNS_TRIES:
                self.close()
                raise OSError(errno.ETIMEDOUT)
            self._send(now_ms)
        return None

    def _address(self, msg):
        """The first A record of an answer to our query, None for anything else."""
        if len(msg) < 12 or (msg[0] << 8 | msg[1]) != self.ident or not msg[2] & 0x80:
            return None  # not the answer to this query
        if msg[3] & 0x0F == 3:
            self.close()
            raise OSError(errno.ENOENT)  # NXDOMAIN: no such name
        at = 12
        for _ in range(msg[4] << 8 | msg[5]):  # the questions, echoed
            at = _skip_name(msg, at) + 4
        for _ in range(msg[6] << 8 | msg[7]):
            at = _skip_name(msg, at)
            if at + 10 > len(msg):
                return None
            kind = msg[at] << 8 | msg[at + 1]
            size = msg[at + 8] << 8 | msg[at + 9]
            at += 10
            if kind == 1 and size == 4 and at + 4 <= len(msg):
                return "%d.%d.%d.%d" % (msg[at], msg[at + 1], msg[at + 2], msg[at + 3])
            at += size
        return None

    def close(self):
        if self.sock is not None:
            try:
                self.sock.close()
            except OSError:
                pass
            self.sock = None


def _skip_name(msg, at):
    while at < len(msg):
        size = msg[at]
        if size & 0xC0 == 0xC0:
            return at + 2  # a pointer ends the name
        if not size:
            return at + 1
        at += 1 + size
    return at
