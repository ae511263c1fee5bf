"""Board-shaped frames on a pty, for the tests and the bench (docs/protocol.md framing).

    board = FakeBoard(b"T01")            # a pty; board.path goes to the logger as a port
    game = Game("ddbu", (40, 40)); game.shot(pins=0b101, carom=1)
    board.send_state(game)               # the shot's SHOT frame, then its STATE frame
    board.commands                       # [(kind, seq, payload)] the logger sent the board
    board.answer(seq, ERR_REFUSED)       # its answer to a command (None: ACK; tools.linkcodes)
    board.answers[CMD_NEW_GAME] = ERR_ASKED   # answer every such command at once so
    board.close()

It answers the logger's CMD_HELLO with a hello and CMD_STATE with its latest state, as
the firmware does; it plays no rules of its own (the rules core makes the states).
"""

import os
import pty
import select
import struct
import threading
import tty
import zlib

from rules_core.snapshot import pack_state
from tools.logger import frames


def state_payload(game, stamp, number=1, game_id=b"G" * 8, boot_id=b"BOOT"):
    """A STATE frame's payload for the rules_core Game ``game``, as the board makes it."""
    history = game.history.tobytes()
    return (struct.pack("<H", number) + game_id + boot_id + struct.pack("<I", stamp)
            + struct.pack("<HI", len(history) // 4, zlib.crc32(history)) + pack_state(game))


class FakeBoard:
    def __init__(self, board_id, boot_id=b"BOOT", game_id=None, game_no=1):
        self.board_id = bytes(board_id)
        self.boot_id = bytes(boot_id)
        self.game_id = game_id or (self.board_id + b"-game---")[:8]
        self.game_no = game_no
        self.master, self.slave = pty.openpty()
        tty.setraw(self.master)
        tty.setraw(self.slave)
        self.path = os.ttyname(self.slave)
        self.seq = 0
        self.stamp = 0
        self.commands = []
        self.answers = {}  # command kind -> the answer it gets at once (answer()'s code)
        self.events = []  # (record, player, points, to) as sent, 1 = first
        self.played = {self.game_id: (self.game_no, self.events)}  # every game's events
        self.last_payload = None
        self._lock = threading.Lock()
        self._closed = False
        self._reader = frames.FrameReader()
        self._thread = threading.Thread(target=self._drain, daemon=True)
        self._thread.start()

    @property
    def key(self):
        """The board's key in the logger's database (its id in hex)."""
        return self.board_id.hex()

    def new_game(self, game_no=None):
        """The next game on this board: a new identity, as after NEW_GAME."""
        self.game_no = self.game_no + 1 if game_no is None else game_no
        self.game_id = (self.board_id + b"%d" % self.game_no + b"--------")[:8]
        self.events = []
        self.played[self.game_id] = (self.game_no, self.events)

    def send_state(self, game):
        """The frames the firmware sends after an event: SHOT (or UNDO) first, then STATE."""
        history = game.history.tobytes()
        count = len(history) // 4
        if count < len(self.events):
            del self.events[count:]
            self.stamp += 1
            self._send(frames.UNDO, self._head() + struct.pack("<H", count))
        state = game.state()
        last = state["last"] or {"player": 0, "points": 0, "to": 0}
        while len(self.events) < count:
            n = len(self.events)
            event = (history[4 * n:4 * n + 4], last["player"], last["points"], last["to"])
            self.events.append(event)
            self._send_event(n + 1, event, resent=False)
        self.stamp += 1
        payload = state_payload(game, self.stamp, self.game_no, self.game_id, self.boot_id)
        self.last_payload = payload
        self._send(frames.STATE, payload)
        return payload

    def answer(self, seq, code=None):
        """The board's answer to the logger's command ``seq`` (one of ``commands``): ACK
        where ``code`` is None, else an ERROR frame with that code (tools.linkcodes.ERR_*)."""
        kind = next((k for k, s, _ in self.commands if s == seq), 0)
        if code is None:
            self._send(frames.ACK, struct.pack("<HB", seq, kind))
        else:
            self._send(frames.ERROR, struct.pack("<BH", code, seq))

    def _head(self, game_id=None):
        game_id = game_id or self.game_id
        return (struct.pack("<H", self.played[game_id][0]) + game_id + self.boot_id
                + struct.pack("<I", self.stamp))

    def _send_event(self, index, event, resent, game_id=None):
        self.stamp += 1
        record, player, points, to = event
        self._send(frames.SHOT, self._head(game_id) + struct.pack(
            "<H4sBhBB", index, record, player, points, to, int(resent)))

    def hello(self):
        payload = (bytes([frames.PROTOCOL_VERSION]) + self.boot_id
                   + bytes([len(self.board_id)]) + self.board_id + b"\x03PWR" + b"fake")
        self._send(frames.HELLO, payload)

    def _send(self, kind, payload):
        with self._lock:
            wire = frames.encode(kind, self.seq, payload)
            self.seq = (self.seq + 1) & 0xFFFF
            view = memoryview(wire)
            while view:
                view = view[os.write(self.master, view):]

    def _drain(self):
        while not self._closed:
            try:
                if not select.select([self.master], [], [], 0.05)[0]:
                    continue
                data = os.read(self.master, 4096)
            except OSError:
                return
            if not data:
                return
            for kind, seq, payload in self._reader.feed(data):
                self.commands.append((kind, seq, bytes(payload)))
                if kind in self.answers:
                    self.answer(seq, self.answers[kind])
                if kind == frames.CMD_HELLO:
                    self.hello()
                elif kind == frames.CMD_EVENT and len(payload) == 10:
                    index = struct.unpack_from("<H", payload, 8)[0]
                    game_id = bytes(payload[:8])  # a game left behind is answered too
                    events = self.played.get(game_id, (0, []))[1]
                    if 1 <= index <= len(events):
                        self._send_event(index, events[index - 1], True, game_id)
                elif kind == frames.CMD_STATE and self.last_payload is not None:
                    self.stamp += 1
                    payload = bytearray(self.last_payload)
                    struct.pack_into("<I", payload, 14, self.stamp)
                    self._send(frames.STATE, bytes(payload))

    def close(self):
        self._closed = True
        # The drain goes before the descriptors: at os.read() on a closed number it would
        # read from whatever file the process opens next under it.
        self._thread.join(timeout=5)
        for fd in (self.master, self.slave):
            try:
                os.close(fd)
            except OSError:
                pass
