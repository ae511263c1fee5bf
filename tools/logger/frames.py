"""Host side of the frame format in docs/protocol.md: split, check and parse frames.

    reader = FrameReader()
    for kind, seq, payload in reader.feed(data):      # only frames whose CRC is right
        fields = parse(kind, payload)                  # dict; ValueError if malformed
    wire = encode(CMD_STATE, 7)                        # a command, ready to write

The kind numbers and error codes are boardlib.link's, so board and host cannot drift apart.
"""

import struct
import zlib

from boardlib import link
from boardlib.link import (  # noqa: F401  (re-exported for the logger and tests)
    ACK,
    CMD_NEW_GAME,
    CMD_PING,
    CMD_STATE,
    CMD_UNDO,
    ERROR,
    HEARTBEAT,
    HELLO,
    SHOT,
    STATE,
)

MAX_WIRE = 96
FOUL_NAMES = ((link.FOUL_ORDINARY, "foul"), (link.FOUL_QUILLES, "quilles"),
              (link.FOUL_ROUGE, "rouge"), (link.FOUL_STOP30, "stop30"))


def cobs_encode(raw):
    out = bytearray()
    block = bytearray()
    for byte in raw:
        if byte:
            block.append(byte)
            if len(block) == 254:
                out.append(255)
                out += block
                block = bytearray()
        else:
            out.append(len(block) + 1)
            out += block
            block = bytearray()
    out.append(len(block) + 1)
    out += block
    return bytes(out)


def cobs_decode(data):
    """Decode one COBS block run (no zero bytes in it); None if malformed."""
    out = bytearray()
    i = 0
    n = len(data)
    while i < n:
        code = data[i]
        if i + code > n:
            return None
        out += data[i + 1:i + code]
        i += code
        if code != 0xFF and i < n:
            out.append(0)
    return bytes(out)


def encode(kind, seq, payload=b""):
    """One frame on the wire: 0x00, COBS(kind, seq, payload, CRC32), 0x00."""
    raw = bytes((kind, seq & 0xFF, (seq >> 8) & 0xFF)) + bytes(payload)
    raw += struct.pack("<I", zlib.crc32(raw))
    return b"\x00" + cobs_encode(raw) + b"\x00"


def new_game_args(rules, distance, sets=1, first=1):
    """Arguments of CMD_NEW_GAME: rules id, distance per player, sets, who starts."""
    return struct.pack("<BHHBB", link.RULES.index(rules), distance[0], distance[1], sets, first)


class FrameReader:
    """Splits a byte stream at 0x00 and keeps the frames whose CRC is right."""

    def __init__(self):
        self._pending = bytearray()
        self.frames = 0
        self.bad_frames = 0
        self.noise_bytes = 0

    def feed(self, data):
        self._pending += data
        frames = []
        pending = self._pending
        start = 0
        while True:
            end = pending.find(0, start)
            if end < 0:
                break
            if end > start:
                frame = self._check(bytes(pending[start:end]))
                if frame is None:
                    self.bad_frames += 1
                    self.noise_bytes += end - start
                else:
                    frames.append(frame)
            start = end + 1
        del pending[:start]
        if len(pending) > 4 * MAX_WIRE:  # endless text without a delimiter: not frames
            self.noise_bytes += len(pending)
            self.bad_frames += 1
            pending.clear()
        self.frames += len(frames)
        return frames

    @staticmethod
    def _check(block):
        if len(block) > MAX_WIRE:
            return None
        raw = cobs_decode(block)
        if raw is None or len(raw) < 7:
            return None
        body = raw[:-4]
        if zlib.crc32(body) != struct.unpack("<I", raw[-4:])[0]:
            return None
        return raw[0], raw[1] | raw[2] << 8, body[3:]


def _text(data):
    return data.decode("ascii", "replace")


def parse(kind, payload):
    """Fields of a board frame as a dict; ValueError for a kind or length that is wrong."""
    if kind == HELLO:
        id_end = 2 + (payload[1] if len(payload) > 1 else 0)
        if len(payload) < id_end + 1 or len(payload) < id_end + 1 + payload[id_end]:
            raise ValueError("short hello")
        cause_end = id_end + 1 + payload[id_end]
        return {"protocol": payload[0], "board_id": payload[2:id_end].hex(),
                "reset_cause": _text(payload[id_end + 1:cause_end]),
                "firmware": _text(payload[cause_end:])}
    if kind == STATE:
        if len(payload) < 3:
            raise ValueError("short state")
        from rules_core.snapshot import unpack_state
        return {"game": payload[0] | payload[1] << 8, "state": unpack_state(bytes(payload[2:]))}
    if kind == SHOT:
        if len(payload) != 11:
            raise ValueError("shot frame of %d bytes" % len(payload))
        game, number, player, points, to, pins, carom, foul = struct.unpack("<HHBhBBBB", payload)
        return {"game": game, "number": number, "player": player, "points": points, "to": to,
                "pins": pins, "carom": carom, "foul": foul}
    if kind == HEARTBEAT:
        if len(payload) != 16:
            raise ValueError("heartbeat of %d bytes" % len(payload))
        uptime, rx_frames, rx_bad, tx_frames = struct.unpack("<IIII", payload)
        return {"uptime_ms": uptime, "rx_frames": rx_frames, "rx_bad": rx_bad,
                "tx_frames": tx_frames}
    if kind == ERROR:
        if len(payload) < 3:
            raise ValueError("short error")
        return {"code": payload[0], "ref": payload[1] | payload[2] << 8,
                "detail": _text(payload[3:])}
    if kind == ACK:
        if len(payload) != 3:
            raise ValueError("ack of %d bytes" % len(payload))
        return {"ref": payload[0] | payload[1] << 8, "command": payload[2]}
    raise ValueError("unknown frame kind 0x%02x" % kind)


def pins_list(mask):
    return [spot + 1 for spot in range(5) if mask >> spot & 1]


def foul_names(mask):
    return [name for bit, name in FOUL_NAMES if mask & bit]
