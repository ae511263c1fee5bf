"""Host side of the frame format in docs/protocol.md: split, check and parse frames.

    reader = FrameReader()
    for kind, seq, payload in reader.feed(data):      # only frames whose CRC is right
        fields = parse(kind, payload)                  # dict; ValueError if malformed
    wire = encode(CMD_STATE, 7)                        # a command, ready to write

The kind numbers and error codes are tools/linkcodes.py's, which tests/test_board_codes.py
checks against the board's (boardlib/link.py), so board and host cannot drift apart.
Every frame layout of the host side is here (the MQTT transport reuses it).
"""

import struct
import zlib

from rules_core import events
from tools import linkcodes
from tools.linkcodes import (  # noqa: F401  (re-exported for the logger and tests)
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
    UNDO,
)

PROTOCOL_VERSION = linkcodes.PROTOCOL_VERSION
CMD_HELLO = linkcodes.CMD_HELLO
CMD_EVENT = linkcodes.CMD_EVENT
CMD_LOGGED = linkcodes.CMD_LOGGED
CMD_RESTORE = linkcodes.CMD_RESTORE

MAX_WIRE = 96
GAME_HEAD = 18  # game u16, game_id (8), boot_id (4), stamp u32


class UnknownProtocol(ValueError):
    """A hello from a board that speaks another protocol version."""


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


def new_game_args(rules, distance, sets=1, first=1, replace=False, teams=0):
    """Arguments of CMD_NEW_GAME: rules id, distance per player, sets, who starts, flags
    (REPLACE: an unfinished game is replaced without asking the players; TEAMS: a ceb
    match of two-man teams)."""
    flags = (linkcodes.REPLACE if replace else 0) | (linkcodes.TEAMS if teams else 0)
    return struct.pack("<BHHBBB", linkcodes.RULES.index(rules), distance[0], distance[1], sets,
                       first, flags)


def event_args(game_id, index):
    """Arguments of CMD_EVENT: which game (its 8-byte id) and which event (1 = first)."""
    return bytes(game_id) + struct.pack("<H", index)


def restore_args(game_id, index, record):
    """Arguments of CMD_RESTORE: which game, which event (1 = first) and its record."""
    return bytes(game_id) + struct.pack("<H", index) + bytes(record)


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


def one_frame(wire):
    """(kind, seq, payload) of a message that is exactly one board frame on the wire
    (0x00, COBS block, 0x00; a kind below 0x80), else None: what a sealed MQTT message
    must carry (docs/network.md)."""
    wire = bytes(wire)
    if len(wire) < 9 or wire[0] or wire[-1] or 0 in wire[1:-1]:
        return None
    frame = FrameReader._check(wire[1:-1])
    if frame is None or frame[0] >= 0x80:
        return None
    return frame


def _text(data):
    # Every byte kept as one character (bytes above 127 too): shown only through printable()
    return bytes(data).decode("latin-1")


def _game_head(payload):
    if len(payload) < GAME_HEAD:
        raise ValueError("short game frame")
    return {"game": payload[0] | payload[1] << 8, "game_id": bytes(payload[2:10]).hex(),
            "boot_id": bytes(payload[10:14]).hex(),
            "stamp": struct.unpack_from("<I", payload, 14)[0]}


def parse(kind, payload):
    """Fields of a board frame as a dict; ValueError for a kind or length that is wrong,
    UnknownProtocol for a hello of another protocol version."""
    if kind == HELLO:
        if not payload:
            raise ValueError("empty hello")
        if payload[0] != PROTOCOL_VERSION:
            raise UnknownProtocol("protocol version %d" % payload[0])
        if len(payload) < 6:
            raise ValueError("short hello")
        id_end = 6 + payload[5]
        if len(payload) < id_end + 1 or len(payload) < id_end + 1 + payload[id_end]:
            raise ValueError("short hello")
        cause_end = id_end + 1 + payload[id_end]
        return {"protocol": payload[0], "boot_id": bytes(payload[1:5]).hex(),
                "board_id": bytes(payload[6:id_end]).hex(),
                "reset_cause": _text(payload[id_end + 1:cause_end]),
                "firmware": _text(payload[cause_end:])}
    if kind == STATE:
        fields = _game_head(payload)
        if len(payload) < GAME_HEAD + 7:
            raise ValueError("short state")
        from rules_core.snapshot import unpack_state
        fields["history"], fields["history_crc"] = struct.unpack_from("<HI", payload, GAME_HEAD)
        fields["packed"] = bytes(payload[GAME_HEAD + 6:])
        fields["state"] = unpack_state(fields["packed"])
        return fields
    if kind == SHOT:
        fields = _game_head(payload)
        if len(payload) != GAME_HEAD + 11:
            raise ValueError("event frame of %d bytes" % len(payload))
        index, record, player, points, to, flags = struct.unpack_from(
            "<H4sBhBB", payload, GAME_HEAD)
        events.decode(record)  # EventError (a ValueError's kin) for a record that is not one
        fields.update(index=index, record=record, player=player, points=points, to=to,
                      resent=bool(flags & 1))
        return fields
    if kind == UNDO:
        fields = _game_head(payload)
        if len(payload) != GAME_HEAD + 2:
            raise ValueError("undo frame of %d bytes" % len(payload))
        fields["history"] = struct.unpack_from("<H", payload, GAME_HEAD)[0]
        return fields
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


def printable(text):
    """Text from the wire made safe for a terminal: control characters, escape sequences
    and anything outside printable ASCII are shown as \\xNN (a backslash itself as \\\\)."""
    out = []
    for ch in str(text):
        if ch == "\\":
            out.append("\\\\")
        elif " " <= ch <= "~":
            out.append(ch)
        else:
            out.append("\\x%02x" % ord(ch) if ord(ch) < 256 else "\\u%04x" % ord(ch))
    return "".join(out)
