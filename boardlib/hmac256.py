"""HMAC-SHA256 (RFC 2104) over hashlib.sha256, for ports without the `hmac` module.

    from boardlib.hmac256 import hmac_sha256, same
    tag = hmac_sha256(key, message)        # 32 bytes
    same(tag, received_tag)                # comparison that takes the same time either way

MicroPython's unix and ESP32 ports have hashlib.sha256 but no hmac; tests check this
against CPython's hmac module. `frame_signer` makes boardlib.framesign's FrameSigner on
CPython (the host tools): the board's is viper, in that module.
"""

import hashlib
import struct

_BLOCK = 64  # SHA-256's block size in bytes


def _pad(key, byte):
    out = bytearray(_BLOCK)
    for i in range(len(key)):
        out[i] = key[i]
    for i in range(_BLOCK):
        out[i] ^= byte
    return out


class Hmac:
    """A key's HMAC-SHA256, with the padded keys made once (a command check is one call)."""

    def __init__(self, key):
        if len(key) > _BLOCK:
            key = hashlib.sha256(key).digest()
        self._inner = _pad(key, 0x36)
        self._outer = _pad(key, 0x5C)

    def digest(self, *parts):
        inner = hashlib.sha256(self._inner)
        for part in parts:
            inner.update(part)
        outer = hashlib.sha256(self._outer)
        outer.update(inner.digest())
        return outer.digest()


def hmac_sha256(key, message):
    return Hmac(key).digest(message)


def same(a, b):
    """True when a == b, looking at every byte whatever the first difference is."""
    if len(a) != len(b):
        return False
    diff = 0
    for i in range(len(a)):
        diff |= a[i] ^ b[i]
    return diff == 0


def frame_signer(max_id, nonce_bytes, tag_bytes, most):
    """boardlib.framesign.FrameSigner for CPython, with framesign's sizes (the longest id,
    the nonce's bytes, the tag's bytes, the longest checked body): the same seal and check
    over hashlib. framesign makes it with its own sizes; this module imports nothing of
    it."""

    class FrameSigner:
        def __init__(self, key, nonce, board_id):
            if (not 1 <= len(board_id) <= max_id or len(nonce) != nonce_bytes
                    or len(key) > 64):
                raise ValueError("nonce of 8 bytes, id of 1-32, key of at most 64")
            self._mac = Hmac(bytes(key))
            self._prefix = bytes(nonce) + bytes(board_id)

        def seal(self, counter, wire, out):
            body = struct.pack("<I", counter & 0xFFFFFFFF) + bytes(wire)
            tag = self._mac.digest(self._prefix, body)[:tag_bytes]
            out[:len(body) + tag_bytes] = body + tag
            return len(body) + tag_bytes

        def check(self, msg):
            n = len(msg) - 32
            return 0 <= n <= most and same(
                self._mac.digest(self._prefix, bytes(msg[:n])), bytes(msg[n:]))

    return FrameSigner
