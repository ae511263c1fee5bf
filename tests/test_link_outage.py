"""A serial cable out for longer than the 16-bit frame count takes to come round
(docs/protocol.md, "What the host does"): the logger cannot tell from the number alone,
so a link quiet for longer than a few heartbeats starts its count anew and asks for the
state. The board is boardlib.link on CPython behind a real pty (tests/test_hostile_link.py).
"""

import time

from test_hostile_link import Board, held_everything, run_both

from tools.logger.core import Logger
from tools.port.linkpipe import LinkPipe


class CableBoard(Board):
    """A board whose cable can be pulled: what it writes meanwhile is lost."""

    unplugged = False

    def write(self, buf):
        if self.unplugged:
            return len(buf)
        return super().write(buf)


def test_a_cable_out_for_65500_frames_is_noticed_and_healed(tmp_path, hostile_report):
    db = str(tmp_path / "games.db")
    with LinkPipe() as pipe:
        board = CableBoard(pipe.device_path)
        lg = Logger([pipe.host_path], db, silence_s=0.5)
        try:
            board.boot()
            board.shot(0b00001)
            board.shot(0b00110)
            assert run_both(lg, board, until=lambda lg: held_everything(lg, board))
            board.unplugged = True
            board.shot(0b01000)  # played with the cable out: lost on the way
            board.shot(0b10001)
            board.shot(0)
            # ... and 65,500 frames more (a day and a half of heartbeats): the count has
            # come round to 36 behind where the logger left it
            board.link._seq = (board.link._seq + 65_500 - 8) & 0xFFFF
            time.sleep(0.6)
            board.unplugged = False
            heartbeats = 0
            deadline = time.monotonic() + 20
            while not held_everything(lg, board) and time.monotonic() < deadline:
                board.link._send_heartbeat(0)  # only heartbeats: nothing else would tell
                heartbeats += 1
                run_both(lg, board, seconds=0.05)
            port = lg.ports[0]
        finally:
            lg.close()
            board.close()
    assert lg.last_state == board.game.state()  # the three shots came, asked for
    assert port.counters["silences"] == 1 and port.counters["state_requests"] >= 2
    hostile_report("link: cable out for 65,500 frames", shots_while_out=3, stored=3,
                   silences=1, heartbeats_after=heartbeats)
