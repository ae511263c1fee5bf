"""The board's end of the serial link to the host logger (framing in docs/protocol.md).

    from boardlib import link
    uart = machine.UART(2, 115200, tx=17, rx=16, timeout=0)   # made by the board profile
    lk = link.Link(uart, time.ticks_ms(), board_id=machine.unique_id())
    lk.send_hello(firmware_version, "PWR", now_ms)    # reset cause: a name or a number
    other = link.Link(stream, now_ms, frames=lk)   # a second link making its frames in lk's
                                               # buffers (boardlib.mqttlink: the network's)
    lk.game = game_number                      # carried by every game frame, for people
    lk.game_id[:] = identity                   # 8 random bytes made with the game
    lk.send_event(game.history.count, record, player, points, to, now_ms)
    lk.send_state(snapshot.pack_state(game), now_ms, game.history)
    lk.send_undo(game.history.count, now_ms)
    kind = lk.poll(now_ms)                     # when lk.any() or lk.due has come
    if kind == _CMD_NEW_GAME:                  # lk.cmd_settings(): rules, distance, teams...
        ...; lk.ack(lk.cmd_seq)                # or lk.nack(lk.cmd_seq, _ERR_REFUSED)
    elif kind == _CMD_PING:
        lk.ack(lk.cmd_seq)

The numbers (frame and command kinds, flags, error codes) are private constants, folded
into the bytecode: they cost the board no names. Code on the board that needs one holds
its own `_NAME = const(N)`; the host's table of them is tools/linkcodes.py, and
tests/test_board_codes.py checks every board module's against it.

A command repeated with the same sequence number and bytes (a host retrying after a lost
answer) is answered again, as the first time, and never reaches the caller twice; the last
eight commands are remembered. CMD_HELLO is answered by Link itself.

The stream needs ``write(buf)`` and a non-blocking ``readinto(buf) -> n or None``;
``any()`` is used when present. boardlib.replstream gives such a stream over UART0 when
the link shares the REPL's port. Every buffer is allocated here, once: an idle poll, and bytes
that do not finish a frame, allocate nothing. A finished frame costs a few small objects
(the CRC's 32-bit int, one memoryview), which is why frames are events, not per poll.
Malformed input is counted in ``rx_bad`` and dropped; it never raises.
"""

import struct
from array import array

# The builtins the event path calls, as this module's globals: MicroPython looks a name
# up in the module's globals first (to the table's first empty slot), then in the
# builtins' table, each time; a global is found at once (docs/performance.md).
from builtins import len, type

from boardlib.cobs import decode_in_place, encode_to
from boardlib.crc32 import crc32_matches, crc32_more, crc32_put, crc32_reg_put
from rules_core.settings import RULES_IDS, check_settings

try:
    from time import ticks_add, ticks_diff
except ImportError:  # CPython: boardlib.ticks wraps as the ESP32 does
    from boardlib.ticks import ticks_add, ticks_diff

try:
    from micropython import const
except ImportError:  # CPython: the integer itself
    const = int


# The link's numbers (tools/linkcodes.py has the host's copy; tests/test_board_codes.py).
_PROTOCOL_VERSION = const(2)
_HEARTBEAT_MS = const(2000)

# Frames from the board.
_HELLO = const(0x01)
_STATE = const(0x02)
_SHOT = const(0x03)
_HEARTBEAT = const(0x04)
_ERROR = const(0x05)
_ACK = const(0x06)
_UNDO = const(0x07)

# Commands from the host; poll() returns one of these, or NONE.
_NONE = const(0)
_CMD_NEW_GAME = const(0x81)
_CMD_UNDO = const(0x82)
_CMD_STATE = const(0x83)
_CMD_PING = const(0x84)
_CMD_HELLO = const(0x85)
_CMD_EVENT = const(0x86)
_CMD_LOGGED = const(0x87)
_CMD_RESTORE = const(0x88)

# NEW_GAME flags.
_REPLACE = const(1)  # replace an unfinished game without asking the players
_TEAMS = const(2)  # a ceb match of two-man teams (CEB 28), not singles

# Error codes (the ERROR frame's first byte).
_ERR_BAD_FRAME = const(1)
_ERR_UNKNOWN_COMMAND = const(2)
_ERR_BAD_LENGTH = const(3)
_ERR_BAD_ARGUMENT = const(4)
_ERR_REFUSED = const(5)
_ERR_ASKED = const(6)
_ERR_BUSY = const(7)  # the setup menu or the wiring check is open on the board
_ERR_SENSOR = const(16)
_ERR_CONFIG = const(17)
_ERR_STORAGE = const(18)
_ERR_INTERNAL = const(19)

_NO_REF = const(0xFFFF)

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
_STATE_AT = const(21)  # _HEADER + _GAME_HEAD: where a game frame's own fields begin
_EVENT_AT = const(21)
_BYTES = (bytes, bytearray, memoryview)  # a history given as its records' bytes


class Link:
    def __init__(self, stream, now_ms, heartbeat_ms=_HEARTBEAT_MS, board_id=b"",
                 boot_id=None, frames=None):
        self._stream = stream
        # any() taken once (a lookup and a bound method saved every poll), if it is there:
        # the board's task also asks it while it sleeps (firmware.run.Wake)
        self.any = getattr(stream, "any", None)
        if frames is None:  # the buffers a frame is made in, and its views by length
            self._raw = bytearray(_MAX_RAW)
            self._tx_views = {}
            self._tx = bytearray(_MAX_WIRE)
        else:  # another Link's: a frame is made and written whole before the next begins
            self._raw = frames._raw
            self._tx_views = frames._tx_views
            self._tx = frames._tx
        self._chunk = bytearray(_RX_CHUNK)
        self._chunk_len = 0
        self._chunk_pos = 0
        self._frame = bytearray(_RX_FRAME)
        self._frame_len = 0  # past _RX_FRAME: the frame overflowed, dropped at its end
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
        self.cmd_kind = _NONE
        self.rules = RULES_IDS[0]
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
        # Room in the attribute table (docs/performance.md, "Attribute tables with room"):
        # a full one is searched whole for every name it lacks, each method's.
        self._room = None

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
        struct.pack_into("<B4sB", raw, 3, _PROTOCOL_VERSION, self.boot_id, len(ident))
        end = 9 + len(ident)
        raw[9:end] = ident
        cause_at = end
        end = self._put_text(cause_at + 1, self._reset_cause, _MAX_CAUSE)
        raw[cause_at] = end - cause_at - 1
        end = self._put_text(end, self._version)
        return self._send(_HELLO, end - _HEADER)

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
        if len(payload) > _MAX_PAYLOAD - _GAME_HEAD - 6:
            raise ValueError("state payload too long: %d bytes" % len(payload))
        # (few locals, each slot used for one thing after another: a frame over 11 words
        # comes from the heap at every call, docs/performance.md)
        self._game_head()
        if type(history) in _BYTES:  # the records as bytes
            kind = len(history)
        else:  # a game's History: its count, not a call of its __len__
            kind = history.count * _RECORD
        raw = self._raw
        now_ms = kind // _RECORD
        raw[_STATE_AT] = now_ms & 0xFF  # the count, u16 LE
        raw[_STATE_AT + 1] = (now_ms >> 8) & 0xFF
        if kind:  # the CRC straight into the frame: no 32-bit int is made
            self._events_crc(history, kind)
        else:
            raw[_STATE_AT + 2:_STATE_AT + 6] = b"\x00\x00\x00\x00"
        now_ms = _STATE_AT + 6 + len(payload)
        raw[_STATE_AT + 6:now_ms] = payload
        raw[0] = _STATE
        return self._seal(now_ms - _HEADER)

    def _events_crc(self, history, count):
        """The CRC-32 of history[:count] into the STATE frame: the register kept from the
        last STATE runs on over the records appended since, when it is of this history
        and the history has not been cut since (history_cuts); else from the start."""
        reg = self._crc_reg
        start = self._crc_len
        if (self.history_cuts < 0 or self.history_cuts != self._crc_cuts
                or history is not self._crc_of or count < start):
            reg[0] = reg[1] = 0xFFFF
            start = 0
            self._crc_of = history if self.history_cuts >= 0 else None
            self._crc_cuts = self.history_cuts
        self._crc_len = count
        if type(history) in _BYTES:
            crc32_more(history, start, count, reg)
        else:  # the chunks the records are in, a run at a time
            history.each(start, count, crc32_more, reg)
        crc32_reg_put(reg, self._raw, _STATE_AT + 2)

    def send_event(self, index, record, player, points, to, now_ms, resent=False):
        """Event ``index`` of the game's history (1 = first): its record exactly as the
        game applied it (rules_core.events), and what it made: shooter, points and who
        got them (0, 0, 0 when ``resent`` answers CMD_EVENT: only the record is known)."""
        if points < -32768:
            points = -32768
        elif points > 32767:
            points = 32767
        # byte by byte into the frame, not struct.pack_into: with its ten arguments on
        # the stack the frame came from the heap at every call (docs/performance.md);
        # the frame's buffer in now_ms's slot (a local, not an attribute read a byte)
        self._game_head()
        now_ms = self._raw
        now_ms[_EVENT_AT] = index & 0xFF
        now_ms[_EVENT_AT + 1] = (index >> 8) & 0xFF
        now_ms[_EVENT_AT + 2] = record[0]  # (a slice takes one word more of the frame)
        now_ms[_EVENT_AT + 3] = record[1]
        now_ms[_EVENT_AT + 4] = record[2]
        now_ms[_EVENT_AT + 5] = record[3]
        now_ms[_EVENT_AT + 6] = player & 0xFF
        now_ms[_EVENT_AT + 7] = points & 0xFF
        now_ms[_EVENT_AT + 8] = (points >> 8) & 0xFF
        now_ms[_EVENT_AT + 9] = to & 0xFF
        now_ms[_EVENT_AT + 10] = 1 if resent else 0
        now_ms[0] = _SHOT
        return self._seal(_GAME_HEAD + 11)

    def send_undo(self, history_len, now_ms):
        """The last event was taken back: ``history_len`` events are left."""
        at = self._game_head()
        struct.pack_into("<H", self._raw, at, history_len & 0xFFFF)
        return self._send(_UNDO, at + 2 - _HEADER)

    def send_error(self, code, detail="", ref=_NO_REF):
        """An error the host should log: code (ERR_*), the command it answers or NO_REF,
        and a short ASCII detail."""
        raw = self._raw
        raw[3] = code & 0xFF
        raw[4] = ref & 0xFF
        raw[5] = (ref >> 8) & 0xFF
        end = self._put_text(6, detail)
        return self._send(_ERROR, end - _HEADER)

    def cmd_settings(self):
        """The last CMD_NEW_GAME's settings as a dict: rules, distance, sets, first, teams."""
        return {"rules": self.rules, "distance": (self.distance[0], self.distance[1]),
                "sets": self.sets, "first": self.first, "teams": self.teams}

    def ack(self, cmd_seq):
        """The command with sequence number ``cmd_seq`` was carried out."""
        kind = self.cmd_kind if cmd_seq == self.cmd_seq else _NONE
        self._remember(cmd_seq, _ACK, kind)
        return self._send_ack(cmd_seq, kind)

    def nack(self, cmd_seq, code):
        """The command with sequence number ``cmd_seq`` was refused, for reason ``code``."""
        self._remember(cmd_seq, _ERROR, code)
        return self.send_error(code, "", cmd_seq)

    def _send_ack(self, cmd_seq, kind):
        raw = self._raw
        raw[3] = cmd_seq & 0xFF
        raw[4] = (cmd_seq >> 8) & 0xFF
        raw[5] = kind
        return self._send(_ACK, 3)

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
            self.send_error(_ERR_BAD_FRAME, self.rx_bad)
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
                return _NONE
            if not self._read():
                return _NONE
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
                    if kind != _NONE:
                        return kind
                elif self._frame_len < _RX_FRAME:
                    self._frame[self._frame_len] = byte
                    self._frame_len += 1
                else:  # overflowed: the rest up to its end is dropped with it
                    self._frame_len = _RX_FRAME + 1
            if not self._read():
                return _NONE
        return _NONE

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
        if length > _RX_FRAME:  # overflowed
            self._bad()
            return _NONE
        if length == 0:  # two delimiters in a row: the normal start of a frame
            return _NONE
        frame = self._frame
        length = decode_in_place(frame, length)
        if length < _HEADER + _CRC:
            self._bad()
            return _NONE
        body = length - _CRC
        if not crc32_matches(frame, body):
            self._bad()
            return _NONE
        kind = frame[0]
        seq = frame[1] | frame[2] << 8
        args = body - _HEADER
        if self._repeated(frame, seq, body):
            return _NONE
        self.cmd_seq = seq
        self.cmd_kind = kind
        if kind == _CMD_NEW_GAME:
            if args != _NEW_GAME_ARGS and args != _NEW_GAME_ARGS + 1:
                return self._refuse(seq, _ERR_BAD_LENGTH)
            rules = frame[3]
            first_distance = frame[4] | frame[5] << 8
            second_distance = frame[6] | frame[7] << 8
            sets = frame[8]
            first = frame[9]
            flags = frame[10] if args > _NEW_GAME_ARGS else 0
            teams = 1 if flags & _TEAMS else 0
            if rules >= len(RULES_IDS) or flags & ~(_REPLACE | _TEAMS) or check_settings(
                    RULES_IDS[rules], (first_distance, second_distance), sets, first, teams):
                return self._refuse(seq, _ERR_BAD_ARGUMENT)
            self.rules = RULES_IDS[rules]
            self.distance[0] = first_distance
            self.distance[1] = second_distance
            self.sets = sets
            self.first = first
            self.teams = teams
            self.replace = bool(flags & _REPLACE)
        elif kind == _CMD_UNDO or kind == _CMD_STATE or kind == _CMD_PING or kind == _CMD_HELLO:
            if args != 0:
                return self._refuse(seq, _ERR_BAD_LENGTH)
        elif kind == _CMD_EVENT or kind == _CMD_LOGGED or kind == _CMD_RESTORE:
            if args != (_ID if kind == _CMD_LOGGED else
                        _ID + 2 if kind == _CMD_EVENT else _ID + 2 + _RECORD):
                return self._refuse(seq, _ERR_BAD_LENGTH)
            self.cmd_game[:] = frame[3:3 + _ID]
            if kind != _CMD_LOGGED:
                self.cmd_index = frame[3 + _ID] | frame[4 + _ID] << 8
            if kind == _CMD_RESTORE:  # the event record to append (a new bytes: rare)
                self.cmd_record = bytes(frame[5 + _ID:5 + _ID + _RECORD])
        else:
            return self._refuse(seq, _ERR_UNKNOWN_COMMAND)
        self.rx_frames += 1
        if kind == _CMD_HELLO:  # who are you: answered here, the firmware need not know
            self.ack(seq)
            self._hello()
            return _NONE
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
                if answers[slot + 6] == _ACK:
                    self._send_ack(seq, detail)
                    if detail == _CMD_HELLO:
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
        return _NONE

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
        return self._send(_HEARTBEAT, 16)

    def _send(self, kind, payload_len):
        self._raw[0] = kind
        return self._seal(payload_len)

    def _seal(self, payload_len):
        """Send the frame in _raw whose kind is set: its sequence number, CRC and COBS
        (the game frames call this one: one call less, and their frames stay small)."""
        raw = self._raw
        kind = self._seq
        raw[1] = kind & 0xFF
        raw[2] = kind >> 8
        self._seq = (kind + 1) & 0xFFFF
        payload_len += _HEADER  # the body
        crc32_put(raw, payload_len, raw, payload_len)
        # (_tx[0] is a leading delimiter, made once: it ends any text the REPL wrote in
        # between)
        kind = encode_to(raw, payload_len + _CRC, self._tx, 1)  # (viper on the board)
        self._tx[kind] = 0
        kind += 1
        raw = self._tx_views.get(kind)
        if raw is None:  # one view per frame length, made once: no slice per frame
            raw = self._tx_views[kind] = memoryview(self._tx)[:kind]
        return self._write(raw)

    def _write(self, wire):
        # (apart from _send: with its try block their frame would come from the heap)
        try:
            self._stream.write(wire)
        except OSError:  # a full or unplugged UART loses this frame; the seq shows the gap
            self.tx_errors += 1
            return False
        self.tx_frames += 1
        return True
