"""The board's end of the serial link to the host logger (framing in docs/protocol.md).

    from boardlib import link
    uart = machine.UART(2, 115200, tx=17, rx=16, timeout=0)   # made by the board profile
    lk = link.Link(uart, time.ticks_ms(), board_id=machine.unique_id())
    lk.send_hello(firmware_version, "PWR", now_ms)    # reset cause: a name or a number
    lk.game = game_number                      # carried by every game frame, for people
    lk.game_id[:] = identity                   # 8 random bytes made with the game
    lk.send_event(game.history.count, record, player, points, to, now_ms)
    lk.send_state(snapshot.pack_state(game), now_ms, game.history)
    lk.send_undo(game.history.count, now_ms)
    kind = lk.poll(now_ms)                     # when lk.any() or lk.due has come
    if kind == link.CMD_NEW_GAME:              # lk.cmd_settings(): rules, distance, teams...
        ...; lk.ack(lk.cmd_seq)                # or lk.nack(lk.cmd_seq, link.ERR_REFUSED)
    elif kind == link.CMD_PING:
        lk.ack(lk.cmd_seq)

A command repeated with the same sequence number and bytes (a host retrying after a lost
answer) is answered again, as the first time, and never reaches the caller twice; the last
eight commands are remembered. CMD_HELLO is answered by Link itself.

The stream needs ``write(buf)`` and a non-blocking ``readinto(buf) -> n or None``;
``any()`` is used when present. ``repl_stream()`` gives such a stream over UART0 when the
link shares the REPL's port. Every buffer is allocated here, once: an idle poll, and bytes
that do not finish a frame, allocate nothing. A finished frame costs a few small objects
(the CRC's 32-bit int, one memoryview), which is why frames are events, not per poll.
Malformed input is counted in ``rx_bad`` and dropped; it never raises.
"""

import struct
from array import array

from boardlib import cobs
from boardlib.crc32 import crc32_matches, crc32_more, crc32_put, crc32_reg_put
from boardlib.ticks import ticks_add, ticks_diff
from rules_core.settings import RULES_IDS, check_settings

try:
    from micropython import const
except ImportError:  # CPython: the integer itself
    const = int


PROTOCOL_VERSION = const(2)
DEFAULT_UART = const(2)
DEFAULT_BAUD = const(115200)
HEARTBEAT_MS = const(2000)

# Frames from the board.
HELLO = const(0x01)
STATE = const(0x02)
SHOT = const(0x03)
HEARTBEAT = const(0x04)
ERROR = const(0x05)
ACK = const(0x06)
UNDO = const(0x07)

# Commands from the host; poll() returns one of these, or NONE.
NONE = const(0)
CMD_NEW_GAME = const(0x81)
CMD_UNDO = const(0x82)
CMD_STATE = const(0x83)
CMD_PING = const(0x84)
CMD_HELLO = const(0x85)
CMD_EVENT = const(0x86)
CMD_LOGGED = const(0x87)
CMD_RESTORE = const(0x88)

# NEW_GAME flags.
REPLACE = const(1)  # replace an unfinished game without asking the players
TEAMS = const(2)  # a ceb match of two-man teams (CEB 28), not singles

# Error codes (the ERROR frame's first byte).
ERR_BAD_FRAME = const(1)
ERR_UNKNOWN_COMMAND = const(2)
ERR_BAD_LENGTH = const(3)
ERR_BAD_ARGUMENT = const(4)
ERR_REFUSED = const(5)
ERR_ASKED = const(6)
ERR_BUSY = const(7)  # the setup menu or the wiring check is open on the board
ERR_SENSOR = const(16)
ERR_CONFIG = const(17)
ERR_STORAGE = const(18)
ERR_INTERNAL = const(19)

RULES = RULES_IDS  # a rules id's number on the wire is its index
NO_REF = const(0xFFFF)

_HEADER = const(3)  # kind, sequence number (u16 LE)
_CRC = const(4)
_MAX_PAYLOAD = const(84)  # keeps a frame within 96 bytes on the wire
_MAX_RAW = const(91)  # _HEADER + _MAX_PAYLOAD + _CRC
_MAX_WIRE = const(94)  # delimiter + COBS(_MAX_RAW) + delimiter
_MAX_TEXT = const(32)
_MAX_CAUSE = const(12)
_MAX_ID = const(32)  # a board id in the hello: machine.unique_id(), or the network id
_RX_FRAME = const(32)  # longest command is 21 raw bytes; the rest is room for garbage
_RX_CHUNK = const(32)
_READS_PER_POLL = const(4)
_NEW_GAME_ARGS = const(7)
_ID = const(8)  # game identity: random bytes made with the game
_BOOT_ID = const(4)  # random bytes made at every boot
_RECORD = const(4)  # rules_core.events.RECORD_SIZE
_GAME_HEAD = const(18)  # game u16, game_id, boot_id, stamp u32
_REMEMBERED = const(8)  # commands whose answers are kept for repeats
_SLOT = const(8)  # per remembered command: seq (2), CRC (4), answer kind, error code
_BAD_REPORT_MS = const(1000)


class Link:
    def __init__(self, stream, now_ms, heartbeat_ms=HEARTBEAT_MS, board_id=b"",
                 boot_id=None):
        self._stream = stream
        # any() taken once (a lookup and a bound method saved every poll), if it is there:
        # the board's task also asks it while it sleeps (firmware.run.Wake)
        self.any = getattr(stream, "any", None)
        self._raw = bytearray(_MAX_RAW)
        self._tx_views = {}
        self._tx = bytearray(_MAX_WIRE)
        self._tx_view = memoryview(self._tx)
        self._chunk = bytearray(_RX_CHUNK)
        self._chunk_len = 0
        self._chunk_pos = 0
        self._frame = bytearray(_RX_FRAME)
        self._frame_len = 0
        self._overflow = False
        self._seq = 0
        self._last_heartbeat = now_ms
        self._last_bad_report = now_ms
        self._bad_unreported = 0
        self.heartbeat_ms = heartbeat_ms
        # When poll() next has something to send with no byte arriving (ticks): the
        # heartbeat, or the report of bad frames.
        self.due = now_ms
        self.board_id = bytes(board_id[:_MAX_ID])
        if boot_id is None:
            import os

            boot_id = os.urandom(_BOOT_ID)
        self.boot_id = bytes(boot_id[:_BOOT_ID])
        self._stamp = 0  # game frames sent since boot: orders them with boot_id
        self._version = 0
        self._reset_cause = "PWR"
        self.game = 0
        self.game_id = bytearray(_ID)
        self.cmd_game = bytearray(_ID)  # CMD_EVENT / CMD_LOGGED: which game
        self.cmd_index = 0  # CMD_EVENT / CMD_RESTORE: which event (1 = first)
        self.cmd_record = b""  # CMD_RESTORE: the event record to append
        self.replace = False  # the last CMD_NEW_GAME said REPLACE
        self._answers = bytearray(_REMEMBERED * _SLOT)
        self._answers_next = 0
        self._cmd_slot = -1
        self.rx_repeats = 0
        self.cmd_seq = 0
        self.cmd_kind = NONE
        self.rules = RULES[0]
        self.distance = [0, 0]
        self.sets = 1
        self.first = 1
        self.teams = 0
        self.rx_bad = 0
        self.rx_frames = 0
        self.tx_frames = 0
        self.tx_errors = 0
        # The events' CRC of the STATE frame, kept as the history grows (crc32_more), so
        # that a long game's state costs its new records, not its whole history, a frame.
        # Only while the caller says how often the history was cut (history_cuts, the
        # game's `cuts`: an undo) before each send_state; -1, not said: taken whole.
        self.history_cuts = -1
        self._crc_of = None  # the history the register is of, its cuts and length then
        self._crc_cuts = -1
        self._crc_len = 0
        self._crc_reg = array("H", (0xFFFF, 0xFFFF))

    # -- frames to the host -------------------------------------------------------------

    def send_hello(self, version, reset_cause, now_ms):
        """Boot announcement: protocol version, this boot's random id, board id, reset
        cause ("PWR", "WDT", ... or machine.reset_cause()'s number) and firmware version
        (text or number). The first starts the frame count at 0; CMD_HELLO repeats it."""
        self._version = version
        self._reset_cause = reset_cause
        self._seq = 0
        self._last_heartbeat = now_ms
        self.due = ticks_add(now_ms, self.heartbeat_ms)
        return self._hello()

    def _hello(self):
        raw = self._raw
        ident = self.board_id
        struct.pack_into("<B4sB", raw, 3, PROTOCOL_VERSION, self.boot_id, len(ident))
        end = 9 + len(ident)
        raw[9:end] = ident
        cause_at = end
        end = self._put_text(cause_at + 1, self._reset_cause, _MAX_CAUSE)
        raw[cause_at] = end - cause_at - 1
        end = self._put_text(end, self._version)
        return self._send(HELLO, end - _HEADER)

    def _game_head(self):
        """game u16, game_id, boot_id, stamp u32 at the payload's start; returns the end."""
        raw = self._raw
        self._stamp += 1
        struct.pack_into("<H8s4sI", raw, _HEADER, self.game & 0xFFFF, self.game_id,
                         self.boot_id, self._stamp)
        return _HEADER + _GAME_HEAD

    def send_state(self, payload, now_ms, history=b""):
        """The packed board state (rules_core.snapshot.pack_state) with the count and
        CRC-32 of the game's event records (``game.history``, a rules_core.game.History
        kept in chunks, or the records as bytes), so that the host can tell whether it
        holds every event the state counts."""
        length = len(payload)
        if length > _MAX_PAYLOAD - _GAME_HEAD - 6:
            raise ValueError("state payload too long: %d bytes" % length)
        at = self._game_head()
        raw = self._raw
        kind = type(history)
        if kind is bytes or kind is bytearray or kind is memoryview:
            count = len(history)
        else:  # a game's History: its count, not a call of its __len__
            count = history.count * _RECORD
        struct.pack_into("<H", raw, at, (count // _RECORD) & 0xFFFF)
        if count:  # the CRC straight into the frame: no 32-bit int is made
            self._events_crc(history, count, raw, at + 2)
        else:
            raw[at + 2:at + 6] = b"\x00\x00\x00\x00"
        at += 6
        raw[at:at + length] = payload
        return self._send(STATE, at + length - _HEADER)

    def _events_crc(self, history, count, out, at):
        """The CRC-32 of history[:count] into out[at:at + 4]: the register kept from the
        last STATE runs on over the records appended since, when it is of this history
        and the history has not been cut since (history_cuts); else from the start."""
        reg = self._crc_reg
        cuts = self.history_cuts
        start = self._crc_len
        if (cuts < 0 or cuts != self._crc_cuts or history is not self._crc_of
                or count < start):
            reg[0] = reg[1] = 0xFFFF
            start = 0
            self._crc_of = history if cuts >= 0 else None
            self._crc_cuts = cuts
        kind = type(history)
        if kind is bytes or kind is bytearray or kind is memoryview:
            crc32_more(history, start, count, reg)
        else:  # the chunks the records are in, a run at a time
            history.each(start, count, crc32_more, reg)
        self._crc_len = count
        crc32_reg_put(reg, out, at)

    def send_event(self, index, record, player, points, to, now_ms, resent=False):
        """Event ``index`` of the game's history (1 = first): its record exactly as the
        game applied it (rules_core.events), and what it made: shooter, points and who
        got them (0, 0, 0 when ``resent`` answers CMD_EVENT: only the record is known)."""
        at = self._game_head()
        raw = self._raw
        struct.pack_into("<H4sBhBB", raw, at, index & 0xFFFF, record, player & 0xFF,
                         max(-32768, min(32767, points)), to & 0xFF, 1 if resent else 0)
        return self._send(SHOT, at + 11 - _HEADER)

    def send_undo(self, history_len, now_ms):
        """The last event was taken back: ``history_len`` events are left."""
        at = self._game_head()
        struct.pack_into("<H", self._raw, at, history_len & 0xFFFF)
        return self._send(UNDO, at + 2 - _HEADER)

    def send_error(self, code, detail="", ref=NO_REF):
        """An error the host should log: code (ERR_*), the command it answers or NO_REF,
        and a short ASCII detail."""
        raw = self._raw
        raw[3] = code & 0xFF
        raw[4] = ref & 0xFF
        raw[5] = (ref >> 8) & 0xFF
        end = self._put_text(6, detail)
        return self._send(ERROR, end - _HEADER)

    def cmd_settings(self):
        """The last CMD_NEW_GAME's settings as a dict: rules, distance, sets, first, teams."""
        return {"rules": self.rules, "distance": (self.distance[0], self.distance[1]),
                "sets": self.sets, "first": self.first, "teams": self.teams}

    def ack(self, cmd_seq):
        """The command with sequence number ``cmd_seq`` was carried out."""
        kind = self.cmd_kind if cmd_seq == self.cmd_seq else NONE
        self._remember(cmd_seq, ACK, kind)
        return self._send_ack(cmd_seq, kind)

    def nack(self, cmd_seq, code):
        """The command with sequence number ``cmd_seq`` was refused, for reason ``code``."""
        self._remember(cmd_seq, ERROR, code)
        return self.send_error(code, "", cmd_seq)

    def _send_ack(self, cmd_seq, kind):
        raw = self._raw
        raw[3] = cmd_seq & 0xFF
        raw[4] = (cmd_seq >> 8) & 0xFF
        raw[5] = kind
        return self._send(ACK, 3)

    def _remember(self, cmd_seq, answer, detail):
        slot = self._cmd_slot
        if slot < 0 or cmd_seq != self.cmd_seq:
            return  # not the command just received: nothing to match a repeat against
        answers = self._answers
        answers[slot + 6] = answer
        answers[slot + 7] = detail

    # -- commands from the host -----------------------------------------------------------

    def poll(self, now_ms):
        """Heartbeat when due, then decode what has arrived, up to the first command.

        Returns the command kind (its sequence number in ``cmd_seq``) or NONE. The caller
        answers every command it gets with ack() or nack(), PING included; a malformed
        command never reaches it (Link answers that with an ERROR frame itself).
        """
        if ticks_diff(now_ms, self._last_heartbeat) >= self.heartbeat_ms:
            self._last_heartbeat = now_ms
            self._send_heartbeat(now_ms)
        if self._bad_unreported and ticks_diff(now_ms, self._last_bad_report) >= _BAD_REPORT_MS:
            # Reported at a bounded rate: a noisy line must not flood the host with errors.
            self._last_bad_report = now_ms
            self._bad_unreported = 0
            self.send_error(ERR_BAD_FRAME, self.rx_bad)
        self.due = ticks_add(self._last_heartbeat, self.heartbeat_ms)
        if self._bad_unreported:
            report = ticks_add(self._last_bad_report, _BAD_REPORT_MS)
            if ticks_diff(report, self.due) < 0:
                self.due = report
        if self._chunk_pos >= self._chunk_len:
            # Nothing has arrived: the idle poll ends here, in a frame small enough for
            # the C stack (no try: machine.UART.any() only counts bytes; _read() has it).
            waiting = self.any
            if waiting is not None and not waiting():
                return NONE
            if not self._read():
                return NONE
        kind = self._receive()
        if self._chunk_pos < self._chunk_len:
            self.due = now_ms  # bytes after a command: the next poll at once
        return kind

    def _receive(self):
        # A few chunks at most per poll: a command split across reads still comes out in
        # one poll, and a flood of garbage cannot hold the caller for long.
        # poll() has read the first; the last one read is decoded in the next poll.
        for _ in range(_READS_PER_POLL):
            while self._chunk_pos < self._chunk_len:
                byte = self._chunk[self._chunk_pos]
                self._chunk_pos += 1
                if byte == 0:
                    kind = self._end_frame()
                    if kind != NONE:
                        return kind
                elif self._overflow:
                    pass
                elif self._frame_len < _RX_FRAME:
                    self._frame[self._frame_len] = byte
                    self._frame_len += 1
                else:
                    self._overflow = True
            if not self._read():
                return NONE
        return NONE

    # -- inside ---------------------------------------------------------------------------

    def _read(self):
        # The bytes read (0: none). A UART error must not stop the board; the host re-asks.
        self._chunk_pos = got = 0
        try:
            if self.any is None or self.any():
                got = self._stream.readinto(self._chunk) or 0
        except OSError:
            self._bad()
        self._chunk_len = got
        return got

    def _bad(self):
        self.rx_bad += 1
        self._bad_unreported += 1
        report = ticks_add(self._last_bad_report, _BAD_REPORT_MS)  # poll() is due then
        if ticks_diff(report, self.due) < 0:
            self.due = report

    def _end_frame(self):
        length = self._frame_len
        self._frame_len = 0
        if self._overflow:
            self._overflow = False
            self._bad()
            return NONE
        if length == 0:  # two delimiters in a row: the normal start of a frame
            return NONE
        frame = self._frame
        length = cobs.decode_in_place(frame, length)
        if length < _HEADER + _CRC:
            self._bad()
            return NONE
        body = length - _CRC
        if not crc32_matches(frame, body):
            self._bad()
            return NONE
        kind = frame[0]
        seq = frame[1] | frame[2] << 8
        args = body - _HEADER
        if self._repeated(frame, seq, body):
            return NONE
        self.cmd_seq = seq
        self.cmd_kind = kind
        if kind == CMD_NEW_GAME:
            if args != _NEW_GAME_ARGS and args != _NEW_GAME_ARGS + 1:
                return self._refuse(seq, ERR_BAD_LENGTH)
            rules = frame[3]
            first_distance = frame[4] | frame[5] << 8
            second_distance = frame[6] | frame[7] << 8
            sets = frame[8]
            first = frame[9]
            flags = frame[10] if args > _NEW_GAME_ARGS else 0
            teams = 1 if flags & TEAMS else 0
            if rules >= len(RULES) or flags & ~(REPLACE | TEAMS) or check_settings(
                    RULES[rules], (first_distance, second_distance), sets, first, teams):
                return self._refuse(seq, ERR_BAD_ARGUMENT)
            self.rules = RULES[rules]
            self.distance[0] = first_distance
            self.distance[1] = second_distance
            self.sets = sets
            self.first = first
            self.teams = teams
            self.replace = bool(flags & REPLACE)
        elif kind == CMD_UNDO or kind == CMD_STATE or kind == CMD_PING or kind == CMD_HELLO:
            if args != 0:
                return self._refuse(seq, ERR_BAD_LENGTH)
        elif kind == CMD_EVENT or kind == CMD_LOGGED or kind == CMD_RESTORE:
            if args != (_ID if kind == CMD_LOGGED else
                        _ID + 2 if kind == CMD_EVENT else _ID + 2 + _RECORD):
                return self._refuse(seq, ERR_BAD_LENGTH)
            self.cmd_game[:] = frame[3:3 + _ID]
            if kind != CMD_LOGGED:
                self.cmd_index = frame[3 + _ID] | frame[4 + _ID] << 8
            if kind == CMD_RESTORE:  # the event record to append (a new bytes: rare)
                self.cmd_record = bytes(frame[5 + _ID:5 + _ID + _RECORD])
        else:
            return self._refuse(seq, ERR_UNKNOWN_COMMAND)
        self.rx_frames += 1
        if kind == CMD_HELLO:  # who are you: answered here, the firmware need not know
            self.ack(seq)
            self._hello()
            return NONE
        return kind

    def _repeated(self, frame, seq, body):
        """Answer a repeated command again; otherwise make room to remember this one.
        A slot is seq (2 bytes), CRC (4), answer kind (0: none yet), ERROR code or ACKed
        kind. Slices allocate, but only for a whole frame received, never when idle."""
        answers = self._answers
        key = frame[1:3] + frame[body:body + _CRC]
        for slot in range(0, _REMEMBERED * _SLOT, _SLOT):
            if answers[slot + 6] and answers[slot:slot + 6] == key:
                self.rx_repeats += 1
                self._cmd_slot = -1
                detail = answers[slot + 7]
                if answers[slot + 6] == ACK:
                    self._send_ack(seq, detail)
                    if detail == CMD_HELLO:
                        self._hello()
                else:
                    self.send_error(detail, "", seq)
                return True
        slot = self._answers_next
        self._answers_next = (slot + _SLOT) % (_REMEMBERED * _SLOT)
        answers[slot:slot + 6] = key
        answers[slot + 6] = 0
        self._cmd_slot = slot
        return False

    def _refuse(self, seq, code):
        self.rx_bad += 1
        self.cmd_seq = seq
        self.nack(seq, code)
        return NONE

    def _put_text(self, at, text, limit=_MAX_TEXT):
        if isinstance(text, int):
            text = str(text)
        if isinstance(text, str):
            text = text.encode()
        raw = self._raw
        for i in range(min(len(text), limit)):
            byte = text[i]
            raw[at] = byte if 32 <= byte < 127 else 63  # "?" keeps the detail printable
            at += 1
        return at

    def _send_heartbeat(self, now_ms):
        struct.pack_into(
            "<IIII", self._raw, _HEADER, now_ms & 0x3FFFFFFF, self.rx_frames & 0x3FFFFFFF,
            self.rx_bad & 0x3FFFFFFF, self.tx_frames & 0x3FFFFFFF,
        )
        return self._send(HEARTBEAT, 16)

    def _send(self, kind, payload_len):
        raw = self._raw
        raw[0] = kind
        raw[1] = self._seq & 0xFF
        raw[2] = self._seq >> 8
        body = _HEADER + payload_len
        crc32_put(raw, body, raw, body)
        tx = self._tx
        tx[0] = 0  # a leading delimiter ends any text the REPL wrote in between
        end = cobs.encode_into(raw, body + _CRC, tx, 1)
        tx[end] = 0
        self._seq = (self._seq + 1) & 0xFFFF
        wire = self._tx_views.get(end + 1)
        if wire is None:  # one view per frame length, made once: no slice per frame
            wire = self._tx_views[end + 1] = self._tx_view[:end + 1]
        try:
            self._stream.write(wire)
        except OSError:  # a full or unplugged UART loses this frame; the seq shows the gap
            self.tx_errors += 1
            return False
        self.tx_frames += 1
        return True


# The command kinds on the class too, so that code holding only a Link can compare with
# them (set here: inside the class body the const names would be replaced by numbers).
Link.NONE = NONE  # type: ignore[attr-defined]
Link.CMD_NEW_GAME = CMD_NEW_GAME  # type: ignore[attr-defined]
Link.CMD_UNDO = CMD_UNDO  # type: ignore[attr-defined]
Link.CMD_STATE = CMD_STATE  # type: ignore[attr-defined]
Link.CMD_PING = CMD_PING  # type: ignore[attr-defined]
Link.CMD_HELLO = CMD_HELLO  # type: ignore[attr-defined]
Link.CMD_EVENT = CMD_EVENT  # type: ignore[attr-defined]
Link.CMD_LOGGED = CMD_LOGGED  # type: ignore[attr-defined]
Link.CMD_RESTORE = CMD_RESTORE  # type: ignore[attr-defined]


class _ReplStream:
    """UART0 shared with the REPL: raw bytes through sys.stdin/stdout, Ctrl-C disabled."""

    def __init__(self):
        import select
        import sys

        import micropython

        micropython.kbd_intr(-1)  # 0x03 inside a frame must not interrupt the firmware
        self._in = sys.stdin.buffer
        self._out = sys.stdout.buffer
        self._poll = select.poll()
        self._poll.register(sys.stdin, select.POLLIN)
        self._one = bytearray(1)

    def any(self):
        for _ in self._poll.ipoll(0):
            return 1
        return 0

    def readinto(self, buf):
        count = 0
        while count < len(buf) and self.any():
            if not self._in.readinto(self._one):
                break
            buf[count] = self._one[0]
            count += 1
        return count

    def write(self, buf):
        return self._out.write(buf)


def repl_stream():
    """A link stream over the REPL's UART0 (the host skips whatever is not a frame)."""
    return _ReplStream()
