"""What the network link's parts share: the socket umqtt reads and writes, its "not yet",
the link's states, and the dropping of modules the link loads for a while.

    from boardlib.netstream import UP, Later, Stream, buffers, buffers_of, forget
    bufs = buffers()                         # once: firmware.startapp, else buffers_of()
    link._sock = Stream(raw_sock, clock, bufs=buffers_of(link))   # netdial.py, nettls.py
    forget("netdial")                        # its code goes once nothing holds it

The network link (boardlib/mqttlink.py) and the modules of its way up (boardlib/netdial.py,
nettls.py, netlogin.py) all import this module and none of them imports another at its top:
the link loads each of the others only while it needs it.

`Stream` is what umqtt.simple reads and writes: buffers over the non-blocking socket, so that
umqtt's writes never block and its reads never wait (boardlib/netdial.py says how its
connect() and subscribe() take their answers in later polls).

A TLS write that mbedtls could not finish (the socket pushed back) has made a record of the
bytes it was given, and the next write must hand it the same length: it then sends the rest
of that record and reports that length sent, whatever else the buffer holds by then (mbedtls
`ssl_write_real`). So `Stream` writes exactly the same length again after a TLS write that
pushed back, and only then the bytes queued behind it.
"""

import errno
import select
import sys

try:
    from micropython import const
except ImportError:  # CPython: the integer itself
    const = int


_TX_BUF = const(512)  # a CONNECT (_REC_BUF) or three of the longest messages
_RX_BUF = const(256)
_REC_BUF = const(320)  # a CONNECT: client id, last will, user and password (netconfig limits)
_NORMAL = const(0)  # Stream's modes (boardlib/netdial.py sets them)
_RECORD = const(1)
_REPLAY = const(2)

# Where the link is (tools/sim/board/netstate.py names them). The link and the modules of its
# way up hold the ones they use as private constants (tests/test_board_codes.py).
OFF = const(0)
JOIN = const(1)
DIAL = const(2)
LOGIN = const(3)
SUBSCRIBE = const(4)
UP = const(5)
WAIT = const(6)
HANDSHAKE = const(7)
RESOLVE = const(8)


def forget(name):
    """Drop boardlib's module `name` (loaded for a while): once nothing holds its functions,
    the collector takes its code."""
    sys.modules.pop("boardlib." + name, None)
    try:
        delattr(sys.modules["boardlib"], name)
    except (KeyError, AttributeError):
        pass


def buffers():
    """A Stream's buffers (to send, received, a CONNECT recorded), made once, when the game
    is read (firmware/startapp.py) or else at the link's first connection (`buffers_of`),
    and handed to the Stream of every connection: a board that has played a while may have
    the bytes but not the pieces. (Not at power-up: the application and its game come after
    the link is built, and on a heap in pieces they need every block.)"""
    return bytearray(_TX_BUF), bytearray(_RX_BUF), bytearray(_REC_BUF)


def buffers_of(link):
    """The link's stream buffers, kept and used by every connection (boardlib/netdial.py,
    nettls.py): made once the game is read, or else here, at the first connection."""
    if link.bufs is None:
        link.bufs = buffers()
    return link.bufs


class Later(Exception):
    """umqtt read an answer that has not arrived yet (the call is replayed when it has)."""


class Stream:
    """What umqtt.simple reads and writes: a connected non-blocking socket with buffers.

    write() never blocks: bytes go to a buffer that flush() drains as far as the socket
    takes them (OSError when the buffer is full: the connection is dropped). read(n) gives
    n bytes that have arrived; in blocking mode (umqtt's) a read of bytes that are not there
    yet raises Later: nothing ever waits. `ready()` says whether a whole MQTT packet has
    arrived, so that `check_msg()` is called only then."""

    def __init__(self, sock, clock, tls=False, bufs=None):
        self.sock = sock
        self.clock = clock
        self.tls = tls
        self.poller = select.poll()
        self.poller.register(sock, select.POLLIN)
        # the link's (buffers(), made once), else this stream's own
        self.tx, self.rx, self.rec = bufs or buffers()
        self.tx_len = 0
        self.retry = 0  # TLS: the length of the write mbedtls has begun
        self.rx_len = 0
        self.blocking = True
        self.received_at = clock()
        self.rec_len = 0
        self.mode = _NORMAL
        self.replayed = 0

    # -- what umqtt calls -------------------------------------------------------------------

    def setblocking(self, blocking):
        self.blocking = blocking

    def settimeout(self, seconds):
        pass  # umqtt 1.5+ asks for one in connect(); nothing here waits

    def connect(self, *args):
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
        # Views, not slices: a bytearray's slice is a copy, and a message of a few hundred
        # bytes then asked the heap for it three times over (the slice, its bytes, the rest
        # moved down); on a board at its heap's margin the second of them found no room
        # (docs/performance.md, "A message's read without copies").
        rx = memoryview(self.rx)
        out = bytes(rx[:n])
        self.rx[:self.rx_len - n] = rx[n:self.rx_len]  # (memmove: they overlap)
        self.rx_len -= n
        return out

    # -- what the link calls ----------------------------------------------------------------

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
