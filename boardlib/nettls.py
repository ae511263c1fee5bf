"""The network link's TLS: imported only by a board with `"tls": true`, as its game starts
(firmware.startapp, which makes the context then) or else when it first dials.

    from boardlib import nettls
    nettls.prepare(link)              # the TLS context, made ahead while the heap is whole
    nettls.start(link, now_ms)        # the socket is connected: wrap it, send the ClientHello
    nettls.handshake(link, now_ms)    # each poll until the link logs in (or drops)
    context = nettls.context(ca_der, cipher)   # `tls` (1.23+) or `ssl` (1.22)
    gate = nettls.Gate(raw_socket)              # mbedtls reads a record a poll

The connection is TLS 1.2 (RSA key exchange, AES-128-GCM), the broker's certificate checked
against the CA certificate in the board's flash (`ca.der` beside /board.cfg). A handshake is
a few calls of mbedtls, each too long for one poll if given the broker's whole answer at
once: `Gate` hands mbedtls one TLS record a poll, so that the work is done in steps that each
fit (docs/network.md, "TLS"). A board on plain MQTT never loads this module.

TLS on the ESP32 is mbedtls (extmod/modtls_mbedtls.c, `ssl` in extmod/modssl_mbedtls.c
before 1.23). The streams' own `readinto`/`write` are used throughout: an `SSLSocket` has
`recv`/`send` only from 1.25.
"""

import errno
import io
import os
import select
import sys

from boardlib.netstream import HANDSHAKE, Stream

try:
    from time import ticks_diff
except ImportError:  # CPython: boardlib.ticks wraps as the ESP32 does
    from boardlib.ticks import ticks_diff

try:
    from micropython import const
except ImportError:  # CPython: the integer itself
    const = int

# The error codes reported here (firmware/errors.py lists every code; tests/test_board_codes.py).
_BROKER = const(72)
_TLS = const(74)
_TLS_MEMORY = const(76)

# The one cipher suite offered: a key exchange whose every step fits a poll on the ESP32
# (docs/network.md, "TLS": ECDHE takes half a second in one call of mbedtls).
CIPHER = "TLS-RSA-WITH-AES-128-GCM-SHA256"
_HANDSHAKE_MS = const(10000)  # a TLS handshake that takes longer has failed
_POLL = const(3)  # MicroPython's stream ioctl requests: poll, close
_CLOSE = const(4)
_HEADER = const(5)  # record header: type, version (2), length (2)
_CHANGE_CIPHER_SPEC = const(20)
_HANDSHAKE_RECORD = const(22)
# mbedtls's "out of memory" (MBEDTLS_ERR_SSL_ALLOC_FAILED, and the bignum's and X.509's)
NO_MEMORY = (-0x7F00, -0x0010, -0x2880, errno.ENOMEM)


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
        self.header = bytearray(_HEADER)
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
        if self.header_len < _HEADER:
            if self.header_len == 0 and not self.allowed:
                return None
            n = self.sock.readinto(memoryview(buf)[:min(len(buf), _HEADER - self.header_len)])
            if n:
                self.header[self.header_len:self.header_len + n] = buf[:n]
                self.header_len += n
                if self.header_len == _HEADER:
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


def context(ca, cipher):
    """A client context that checks the broker's certificate against the CA certificate
    `ca` (DER) and offers the one `cipher`: MicroPython 1.23+ names the module `tls` and
    takes the CA as `load_verify_locations(cadata)`; 1.22 names it `ssl` and takes
    `load_verify_locations(cafile=None, *, cadata=None)` (extmod/modssl_mbedtls.c, v1.22.0).
    ImportError on a MicroPython without either."""
    try:
        import tls
    except ImportError:
        import ssl as tls  # type: ignore[no-redef]
    ctx = tls.SSLContext(tls.PROTOCOL_TLS_CLIENT)
    try:
        ctx.load_verify_locations(cadata=ca)
    except TypeError:  # 1.23+: the C function takes the data alone
        ctx.load_verify_locations(ca)
    ctx.verify_mode = tls.CERT_REQUIRED  # type: ignore[attr-defined]
    ctx.set_ciphers([cipher])
    return ctx


def read_ca(path):
    """The CA certificate's bytes (DER) at `path`, read in one block of the file's size:
    `f.read()` would grow its buffer 256 bytes at a time, to 1,024 for a 768-byte CA
    (py/stream.c), and leave a hole where the context was to go."""
    with open(path, "rb") as f:
        return f.read(os.stat(path)[6])


def prepare(link):
    """The link's TLS context (`link._tls`), made ahead of its first connection while the
    heap is still in large pieces (firmware.startapp) and kept for every connection. What
    fails here says nothing: no CA, a bad one, no memory or no TLS leave the context to
    the first connection, which makes it again and reports why (`start`). True when the
    link has its context."""
    if link._tls is None:
        try:
            link._tls = context(read_ca(link.ca_path), CIPHER)
        except (MemoryError, OSError, ValueError, ImportError):
            return False
    return True


def start(link, now_ms):
    """The TCP connection is up: the TLS context (made once), the gate, the ClientHello."""
    try:
        if link._tls is None:
            link._tls = context(read_ca(link.ca_path), CIPHER)
        link._gate = Gate(link._raw_sock)
        link._ssl = link._tls.wrap_socket(link._gate, server_hostname=link.net["host"],
                                          do_handshake_on_connect=False)
    except MemoryError:
        link._drop(now_ms, _TLS_MEMORY)
        return
    except OSError as exc:
        # no CA certificate, or mbedtls without memory for the connection
        link._drop(now_ms, _TLS_MEMORY if exc.args[0] in NO_MEMORY else _TLS)
        return
    except (ValueError, ImportError):
        link._drop(now_ms, _TLS)  # not a certificate, or no TLS in this MicroPython
        return
    link._enter(HANDSHAKE, now_ms)
    handshake(link, now_ms)  # the ClientHello goes at once


def handshake(link, now_ms):
    """One record of the broker's handshake a poll, and mbedtls's work on it."""
    gate = link._gate
    gate.next_record()
    try:
        # drives the handshake (no application data comes before it ends); readinto,
        # as SSLSocket has recv() only from MicroPython 1.25
        link._ssl.readinto(link._one)
    except ValueError:  # the broker's certificate refused (the reason is in the text)
        link._drop(now_ms, _TLS)
        return
    except MemoryError:
        link._drop(now_ms, _TLS_MEMORY)
        return
    except OSError as exc:
        code = exc.args[0]
        if code in NO_MEMORY:
            link._drop(now_ms, _TLS_MEMORY)
            return
        if code != errno.EAGAIN:
            # mbedtls's errors are negative, the socket's positive
            link._drop(now_ms, _TLS if code < 0 else _BROKER)
            return
    if gate.finished and not gate.left and not gate.header_len:
        gate.gated = False
        netdial = sys.modules["boardlib.netdial"]
        link._sock = Stream(link._ssl, link.clock, tls=True, bufs=netdial.buffers_of(link))
        netdial.logging_in(link, now_ms)
    elif ticks_diff(now_ms, link._since) >= _HANDSHAKE_MS:
        link._drop(now_ms, _BROKER)
