"""Games logged by the real host logger for the club's tests.

    db = logged_club(tmp_path, [("c1ab0001", [("ddbu", (30, 30), 1, 11), ...]), ...])

Each board is made by hand on a pty (as tests/test_logger.py's boards are): it says hello
with its id, then plays its games one after another (tools.testing.sample.play with the given
seed), sending every shot, undo and board state frame as the firmware does; the logger
(tools.logger.core.Logger, the one `tools.logger` and `tools.club` run) stores them into
the database. Returns the database path once every game's final state is stored.
"""

import os
import pty
import random
import struct
import time
import tty

from rules_core import Game
from tools.logger import frames
from tools.logger.core import Logger
from tools.testing.sample import play, state_fields


class HandBoard:
    def __init__(self, board_id):
        self.master, self.slave = pty.openpty()
        tty.setraw(self.master)
        tty.setraw(self.slave)
        os.set_blocking(self.master, False)
        self.board_id = bytes.fromhex(board_id)
        self.boot_id = os.urandom(4)
        self.seq = 0
        self.stamp = 0
        self.out = b""
        self.game_no = 0
        self.game_id = b""

    @property
    def path(self):
        return os.ttyname(self.slave)

    def send(self, kind, payload):
        self.out += frames.encode(kind, self.seq & 0xFFFF, payload)
        self.seq += 1

    def pump(self):
        """Write what is waiting as far as the pty takes it; drop the host's commands."""
        try:
            os.read(self.master, 65536)
        except BlockingIOError:
            pass
        if self.out:
            try:
                sent = os.write(self.master, self.out[:1024])
            except BlockingIOError:
                sent = 0
            self.out = self.out[sent:]
        return not self.out

    def hello(self):
        self.send(frames.HELLO, bytes([frames.PROTOCOL_VERSION]) + self.boot_id
                  + bytes([len(self.board_id)]) + self.board_id + b"\x03PWRhand")

    def head(self):
        self.stamp += 1
        return (struct.pack("<H", self.game_no) + self.game_id + self.boot_id
                + struct.pack("<I", self.stamp))

    def state(self, game):
        f = state_fields(game)
        self.send(frames.STATE, self.head() + struct.pack("<HI", f["history"],
                                                          f["history_crc"]) + f["packed"])

    def play(self, rules, distance, sets, seed, finish=True):
        """Send a whole game: (the Game as the board ends it, its game number)."""
        rng = random.Random(seed)
        self.game_no += 1
        self.game_id = rng.randbytes(8)
        first = rng.choice((1, 2))
        game = Game(rules, distance, sets, first)
        _, steps = play(rng, rules, distance, sets, first, finish=finish)
        self.state(game)
        for kind, record in steps:
            if kind == "undo":
                game.undo()
                self.send(frames.UNDO, self.head() + struct.pack("<H", len(game.history) // 4))
            else:
                game.apply(record)
                last = game.state()["last"]
                self.send(frames.SHOT, self.head() + struct.pack(
                    "<H4sBhBB", len(game.history) // 4, bytes(record), last["player"],
                    last["points"], last["to"], 0))
            self.state(game)
        return game, self.game_no

    def close(self):
        os.close(self.master)
        os.close(self.slave)


def logged_club(path, boards, timeout=60):
    """Log ``boards`` [(board id hex, [(rules, distance, sets, seed[, finish]), ...])]
    into the database ``path``; returns {(board id, game number): the Game played}."""
    hands = [HandBoard(key) for key, _ in boards]
    lg = Logger([h.path for h in hands], str(path))
    played = {}
    try:
        lg.step(0.01)  # the ports are open: the boards may talk
        for hand, (key, games) in zip(hands, boards, strict=True):
            hand.hello()
            for settings in games:
                game, number = hand.play(*settings)
                played[(key, number)] = game
        deadline = time.monotonic() + timeout
        while not all(h.pump() for h in hands):
            lg.step(0.01)
            assert time.monotonic() < deadline, "the logger did not take the frames"

        def stored(lg):
            for h in hands:
                h.pump()
            rows = lg.store.db.execute(
                "SELECT b.key, g.game_no, g.history, g.complete FROM games g "
                "JOIN boards b ON b.id = g.board").fetchall()
            have = {(key, no): (history, complete) for key, no, history, complete in rows}
            return all(have.get(k) == (len(g.history) // 4, 1) for k, g in played.items())

        assert lg.run(stop_when=stored, timeout=timeout), "the logger did not store every game"
    finally:
        lg.close()
        for h in hands:
            h.close()
    return played
