"""tools/sim/board/vclock.py, the board time the bench counts the firmware's task in: a wait
ends on a 10 ms tick, as MicroPython's poll does on the ESP32, and the table's actions run
at the first tick at or after their time, before the objects are asked."""

from tools.port import upy

PROGRAM = """
from tools.sim.board import vclock
vclock.install()
import select, time

vclock._now[0] = 1000  # on a tick
start = time.ticks_ms()
seen = []

class Flag:
    ready = 0
    def ioctl(self, request, arg):
        seen.append((time.ticks_diff(time.ticks_ms(), start), self.ready))
        return arg & 1 if self.ready else 0

flag = Flag()
poller = select.poll()
print("empty", len(list(poller.ipoll(25))), time.ticks_diff(time.ticks_ms(), start))
poller.register(flag, select.POLLIN)
at = time.ticks_ms()
vclock.at(time.ticks_add(at, 33), lambda: setattr(flag, "ready", 1))
got = list(poller.ipoll(1000))
print("ready", len(got), time.ticks_diff(time.ticks_ms(), at))
print("asked", [s[1] for s in seen])
print("calls", vclock.calls[1], vclock.calls[2])
"""


def test_waits_end_on_ticks_and_the_table_acts_at_its_time():
    proc = upy.run(["-c", PROGRAM], timeout=60)
    assert proc.returncode == 0, proc.stderr
    lines = dict(line.split(" ", 1) for line in proc.stdout.splitlines())
    # nothing registered: a 25 ms wait from a tick ends at the third tick, 30 ms on
    assert lines["empty"] == "0 30"
    # the flag set 33 ms on is seen at the first tick at or after it, 40 ms on; the flag
    # was asked at once and then once a tick: at 0, 10, 20, 30 and 40 ms
    assert lines["ready"] == "1 40"
    assert eval(lines["asked"]) == [0, 0, 0, 0, 1]
    # two waits, 3 + 4 ticks waited through
    assert lines["calls"] == "2 7"
