"""The TCP socket as mbedtls reads it on a board over TLS: kept by the link while it is
connected, as the SSL socket reads and writes through it. The handshake's code
(boardlib/nettls.py) is loaded only while the link connects; this module alone stays.

    from boardlib.netgate import Gate
    gate = Gate(raw_socket)     # wrapped by the SSL socket in place of the TCP socket
    gate.allowed = True         # at each poll of the handshake: one more record may come
    gate.finished               # the broker's Finished is read: the handshake is over
    gate.gated = False          # then: everything as it comes

A handshake is a few calls of mbedtls, each too long for one poll if given the broker's
whole answer at once: `Gate` hands mbedtls one TLS record a poll, so that the work is done
in steps that each fit (docs/network.md, "TLS").
"""

import io
import select

try:
    from micropython import const
except ImportError:  # CPython: the integer itself
    const = int

_POLL = const(3)  # MicroPython's stream ioctl requests: poll, close
_CLOSE = const(4)
_HEADER = const(5)  # record header: type, version (2), length (2)
_CHANGE_CIPHER_SPEC = const(20)
_HANDSHAKE_RECORD = const(22)


class Gate(io.IOBase):
    """The TCP socket as mbedtls reads it: during the handshake at most one TLS record of
    the broker's is completed a poll (`allowed`, set at each poll, lets the next begin), so
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

    def readinto(self, buf):
        if not self.gated:
            return self.sock.readinto(buf)
        if self.header_len < _HEADER:
            if self.header_len == 0 and not self.allowed:
                return None
            n = self.sock.readinto(memoryview(buf)[:min(len(buf), _HEADER - self.header_len)])
            if not n:
                return n
            self.header[self.header_len:self.header_len + n] = buf[:n]
            self.header_len += n
            if self.header_len < _HEADER:
                return n
            self.left = self.header[3] << 8 | self.header[4]  # (0: an empty record)
        else:
            n = self.sock.readinto(memoryview(buf)[:min(len(buf), self.left)])
            if not n:
                return n
            self.left -= n
        if not self.left:  # the record is read whole
            self.header_len = 0
            self.allowed = False  # this poll's record is read: the next waits
            self.records += 1
            kind = self.header[0]
            if kind == _CHANGE_CIPHER_SPEC:
                self.cipher_changed = True
            elif kind == _HANDSHAKE_RECORD and self.cipher_changed:
                self.finished = True
        return n

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
