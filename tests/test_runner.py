"""firmware.run.Runner: the board's one loop sleeps until a pin changes (its interrupt),
the host sends bytes, or something is due (docs/architecture.md). Run in board time
(tools/sim/board/vclock.py: the poll's waits end on 10 ms ticks, as on the ESP32) on the
simulated board."""

from tools.port import upy

PROGRAM = """
from tools.sim.board import vclock
vclock.install()
from firmware.app import App
from firmware.run import Runner
from tools.sim.board.board import build

class Host:
    # the serial link's other end: a command can be put in; frames are counted
    def __init__(self):
        self.inbox = bytearray()
        self.frames = 0
    def any(self):
        return len(self.inbox)
    def readinto(self, buf):
        n = min(len(buf), len(self.inbox))
        buf[:n] = self.inbox[:n]
        self.inbox[:n] = b""
        return n
    def write(self, buf):
        self.frames += 1
        self.last_at = vclock.now()
        return len(buf)

from boardlib.link import Link
host = Host()
sim = build()
sim.board.link = Link(host, vclock.now())
app = App(sim.board)
steps = [0]
step = app.step
def counting(now):
    steps[0] += 1
    return step(now)
app.step = counting
app.boot(vclock.now())
runner = Runner(app, vclock.ticks_ms)
seen = {}

def ping():  # a CMD_PING frame as the logger sends it (COBS, CRC)
    from boardlib import cobs
    from boardlib.crc32 import crc32_put
    raw = bytearray(7)
    raw[0] = 0x84; raw[1] = 7; raw[2] = 0
    crc32_put(raw, 3, raw, 3)
    out = bytearray(12)
    end = cobs.encode_to(raw, 7, out, 1)
    host.inbox.extend(out[:end + 1])

def run_for(ms):
    vclock.stop_at(vclock.now() + ms)
    try:
        runner.run()
    except vclock.Stop:
        pass

run_for(5000)  # the boot's messages are over
s0, f0 = steps[0], host.frames
run_for(60000)  # a minute of nothing
seen["idle_steps"] = steps[0] - s0
seen["idle_frames"] = host.frames - f0  # heartbeats
s0 = steps[0]
start = vclock.now()
vclock.at(start + 100, lambda: sim.set_spot(3, False))
vclock.at(start + 300, lambda: sim.set_spot(3, True))
vclock.at(start + 500, lambda: sim.set_button(2, True))
vclock.at(start + 600, lambda: sim.set_button(2, False))
run_for(1000)
seen["shot_steps"] = steps[0] - s0
seen["shots"] = app.game.shots
seen["score"] = list(app.game.score)
run_for(5000)
f0 = host.frames
at = vclock.now()
vclock.at(at + 3, ping)
run_for(50)
seen["answered_ms"] = host.last_at - at if host.frames > f0 else None
seen["errors"] = runner.errors

print(repr(seen))
"""


def test_the_board_sleeps_until_a_pin_or_the_host_or_a_deadline_wakes_it():
    proc = upy.run(["-c", PROGRAM], heapsize="4M", timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    seen = eval(proc.stdout.strip().splitlines()[-1])
    assert seen["errors"] == 0
    # an idle minute: a wake-up every 2 s for the heartbeat (the watchdog fed with it)
    assert seen["idle_frames"] == 30
    assert 28 <= seen["idle_steps"] <= 35
    # a pin falls on spot 3 and stands again, then ok: the pins' interrupts and the
    # glitch and debounce times wake the task, a few times, and the shot counts
    assert seen["shots"] == 1 and seen["score"] == [2, 0]
    assert seen["shot_steps"] <= 15
    # a command from the host is answered at the next tick
    assert seen["answered_ms"] <= 10
