"""Device-side figures of sealing a frame for the network (boardlib/framesign.py), for
`tools.bench`: what the network link does to every frame it publishes.

    micropython -m tools.sim.board.seal_bench_device sizes N [FILE]  # bytes; allocation
    micropython -m tools.sim.board.seal_bench_device count N [FILE]  # four counted windows

Two frames are sealed: a `state` (the longest frame the board sends: a STATE of a long
game, made by boardlib.link itself) and a `heartbeat` (the frame an idle board sends every
2 s). The key is 32 bytes and the board's id 8 characters (`table-12`), as a club sets them
up. `count` runs, for the state and then the heartbeat, no seal and then N seals, each
between the two gc.isenabled() calls that tools.bench has callgrind take as a window's
edges (see tools/sim/board/bench_device.py, `counted`): four windows in one run, so the
frames are made once. `sizes` writes the two frames to FILE and `count` reads them from
it, so that the 600-shot game behind the state is not played again under callgrind.
Every mode prints `key value` lines.
"""

import gc
import sys

from boardlib.framesign import OVERHEAD, FrameSigner
from boardlib.link import Link
from rules_core import Game
from rules_core.snapshot import pack_state
from tools.sim.board.shots import LONG_SETTINGS

KEY = bytes(range(32))
NONCE = b"\x01\x23\x45\x67\x89\xab\xcd\xef"
BOARD_ID = b"table-12"


class Capture:
    """The link's stream: keeps the last frame written."""

    def __init__(self):
        self.wire = b""

    def write(self, buf):
        self.wire = bytes(buf)
        return len(buf)

    def readinto(self, buf):
        return None


def frames():
    """(state wire, heartbeat wire) as boardlib.link makes them."""
    out = Capture()
    link = Link(out, 0, board_id=BOARD_ID, boot_id=b"boot")
    link.game = 321
    link.game_id[:] = b"gameid12"
    game = Game(LONG_SETTINGS["rules"], LONG_SETTINGS["distance"])
    for i in range(600):  # large numbers: the longest state's COBS and CRC bytes
        game.shot(pins=(i * 7) % 31 or 1)
    link.send_state(pack_state(game), 0, game.history)
    state = out.wire
    link._send_heartbeat(123456789)
    return state, out.wire


def save(path, state, heartbeat):
    with open(path, "wb") as f:
        f.write(len(state).to_bytes(2, "little"))
        f.write(state)
        f.write(heartbeat)


def load(path):
    with open(path, "rb") as f:
        data = f.read()
    n = int.from_bytes(data[:2], "little")
    return data[2:2 + n], data[2 + n:]


def seal_many(signer, wire, out, count):
    for i in range(count):
        signer.seal(i, wire, out)


def main(argv):
    if argv[0] == "count" and len(argv) > 2:
        state, heartbeat = load(argv[2])
    else:
        state, heartbeat = frames()
        if len(argv) > 2:
            save(argv[2], state, heartbeat)
    signer = FrameSigner(KEY, NONCE, BOARD_ID)
    out = bytearray(len(state) + OVERHEAD)
    if argv[0] == "count":
        count = int(argv[1])
        for wire in (memoryview(state), memoryview(heartbeat)):
            signer.seal(0, wire, out)  # the first call's own set-up is not the work
            for n in (0, count):
                gc.collect()
                gc.isenabled()
                seal_many(signer, wire, out, n)
                gc.isenabled()
        print("seals", count)
    elif argv[0] == "sizes":
        count = int(argv[1])
        wire = memoryview(state)
        signer.seal(0, wire, out)
        gc.collect()
        gc.disable()
        before = gc.mem_alloc()
        seal_many(signer, wire, out, count)
        allocated = gc.mem_alloc() - before
        gc.enable()
        print("seal_alloc", allocated // max(1, count))
        print("state_wire", len(state))
        print("heartbeat_wire", len(heartbeat))
        print("overhead", OVERHEAD)
    else:
        raise SystemExit("unknown mode %s" % argv[0])


main(sys.argv[1:])
