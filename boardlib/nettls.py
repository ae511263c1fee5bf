"""The network link's TLS handshake, and its context: imported only by a board with
`"tls": true`, as its game starts (firmware.startapp, which makes the context then and drops
this module), and again by the link while it connects, from the TCP connection up to the
handshake's end (boardlib/mqttlink.py, in place of boardlib/netdial.py). Once connected the
link keeps the gate the SSL socket reads through (boardlib/netgate.py), not this module.

    from boardlib import nettls
    nettls.prepare(link)              # the TLS context, made ahead while the heap is whole
    nettls.step(link, now_ms)         # each poll from the TCP connection until the login
    context = nettls.context(ca_der, cipher)   # `tls` (1.23+) or `ssl` (1.22)

The connection is TLS 1.2 (RSA key exchange, AES-128-GCM), the broker's certificate checked
against the CA certificate in the board's flash (`ca.der` beside /board.cfg). mbedtls is
handed one TLS record of the broker's a poll (boardlib.netgate.Gate), so that the work of
each poll fits (docs/network.md, "TLS"). A board on plain MQTT never loads this module.

TLS on the ESP32 is mbedtls (extmod/modtls_mbedtls.c, `ssl` in extmod/modssl_mbedtls.c
before 1.23). The streams' own `readinto`/`write` are used throughout: an `SSLSocket` has
`recv`/`send` only from 1.25.
"""

import errno
import os

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
_TLS = const(74)
_LINK_MEMORY = const(76)
# The link's states used here (boardlib/netstream.py names them all).
_LOGIN = const(3)

# The one cipher suite offered: a key exchange whose every step fits a poll on the ESP32
# (docs/network.md, "TLS": ECDHE takes half a second in one call of mbedtls).
CIPHER = "TLS-RSA-WITH-AES-128-GCM-SHA256"
_HANDSHAKE_MS = const(10000)  # a TLS handshake that takes longer has failed
# The WiFi driver copies each frame it receives into a block of the ESP-IDF heap as large
# (its dynamic RX buffers: ESP-IDF's "Wi-Fi Buffer Usage"): the broker's longest, a whole
# segment of 1,436 bytes (LWIP_TCP_MSS) and its headers
_FRAME_BYTES = const(1536)
# mbedtls's "out of memory" (MBEDTLS_ERR_SSL_ALLOC_FAILED, and the bignum's and X.509's)
NO_MEMORY = (-0x7F00, -0x0010, -0x2880, errno.ENOMEM)


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


def prepare(link, ca=None):
    """The link's TLS context (`link._tls`), made ahead of its first connection while the
    heap is still in large pieces (firmware.startapp) and kept for every connection. What
    fails here says nothing: no CA, a bad one, no memory or no TLS leave the context to
    the first connection, which makes it again and reports why (`start`). True when the
    link has its context."""
    if link._tls is None:
        try:
            link._tls = context(read_ca(link.ca_path) if ca is None else ca, CIPHER)
        except (MemoryError, OSError, ValueError, ImportError):
            return False
    return True


def step(link, now_ms):
    """A poll of the link between the TCP connection and the login: the first wraps the
    socket, each one after it takes the handshake a record further."""
    if not link.wlan.isconnected():
        link._drop(now_ms, _WIFI)
        return
    if link._ssl is None:
        start(link, now_ms)
        if link._ssl is None:
            return  # dropped, its reason reported
    # One record of the broker's handshake a poll, and mbedtls's work on it (in the poll
    # that wraps the socket: the ClientHello, at once).
    gate = link._gate
    gate.allowed = True  # one more of the broker's records may come in this poll
    try:
        # drives the handshake (no application data comes before it ends); readinto,
        # as SSLSocket has recv() only from MicroPython 1.25
        link._ssl.readinto(link._one)
    except ValueError:  # the broker's certificate refused (the reason is in the text)
        link._drop(now_ms, _TLS)
        return
    except MemoryError:
        link._drop(now_ms, _LINK_MEMORY)
        return
    except OSError as exc:
        code = exc.args[0]
        if code in NO_MEMORY:
            link._drop(now_ms, _LINK_MEMORY)
            return
        if code != errno.EAGAIN:
            # mbedtls's errors are negative, the socket's positive
            link._drop(now_ms, _TLS if code < 0 else _BROKER)
            return
    if gate.finished and not gate.left and not gate.header_len:
        gate.gated = False
        link._sock = Stream(link._ssl, link.clock, tls=True, bufs=buffers_of(link))
        # CONNECT goes at the next poll, from boardlib/netlogin.py; this module goes now
        link._enter(_LOGIN, now_ms)
        forget("nettls")
    elif ticks_diff(now_ms, link._since) >= _HANDSHAKE_MS:
        # no answer in time: with no block for a frame, the broker's was dropped here
        link._drop(now_ms, _LINK_MEMORY if _no_room_for_frames() else _BROKER)


def _no_room_for_frames():
    """True when no free block of the ESP-IDF heap holds a whole frame, while TLS holds its
    buffers (esp32.idf_heap_info: total, free, largest free block and least free of each
    region): a heap grown into all the rest (docs/esp32.md, "The radio")."""
    try:
        import esp32
    except ImportError:  # not an ESP32: its memory is not the reason
        return False
    largest = 0
    for region in esp32.idf_heap_info(esp32.HEAP_DATA):
        largest = max(largest, region[2])
    return largest < _FRAME_BYTES


def start(link, now_ms):
    """The TCP connection is up: the TLS context (made once), the gate, the SSL socket
    (whose ClientHello goes in the same poll, from step)."""
    try:
        if link._tls is None:
            link._tls = context(read_ca(link.ca_path), CIPHER)
        from boardlib import netgate  # kept while connected: the SSL socket reads through it

        link._gate = netgate.Gate(link._raw_sock)
        link._ssl = link._tls.wrap_socket(link._gate, server_hostname=link.net["host"],
                                          do_handshake_on_connect=False)
    except MemoryError:
        link._drop(now_ms, _LINK_MEMORY)
        return
    except OSError as exc:
        # no CA certificate, or mbedtls without memory for the connection
        link._drop(now_ms, _LINK_MEMORY if exc.args[0] in NO_MEMORY else _TLS)
        return
    except (ValueError, ImportError):
        link._drop(now_ms, _TLS)  # not a certificate, or no TLS in this MicroPython

