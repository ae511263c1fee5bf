"""tools.simboard.flash: the simulated board's flash as littlefs sees it (unix port only)."""

import os

from tools import upy

IMAGE_GAME = r"""
import os
from rules_core import Game, events
from boardlib.journal import GameStore
from tools.simboard.flash import FileBlockDev, mount

path, step = PATH, STEP
dev = FileBlockDev(path, 4096, 64)
print("formatted", mount(dev, "/flash"))
store = GameStore("/flash/game")
game, status = store.load()
print("status", status)
if game is None:
    game = Game("ceb", distance=(60, 60), sets=3, first=2)
    store.new_game(game)
for pins in (1, 4, 0, 31)[: int(step)]:
    rec = events.encode_shot(pins, 0, ())
    game.apply(rec)
    store.record(game, rec)
print("state", game.state_json())
store.close()
os.umount("/flash")
dev.close()
"""


def run_image(path, step):
    proc = upy.run(["-c", "PATH = %r\nSTEP = %d\n" % (path, step) + IMAGE_GAME],
                   heapsize="2M", timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return dict(line.split(" ", 1) for line in proc.stdout.splitlines())


def test_image_file_keeps_the_game_between_runs(tmp_path):
    path = str(tmp_path / "flash.img")
    first = run_image(path, 2)
    assert first["formatted"] == "True"
    assert first["status"] == "1"  # nothing stored yet
    assert os.path.getsize(path) == 64 * 4096
    second = run_image(path, 2)  # a reboot: same image, the game goes on
    assert second["formatted"] == "False"
    assert second["status"] == "0"
    from rules_core import Game
    g = Game("ceb", distance=(60, 60), sets=3, first=2)
    for pins in (1, 4, 1, 4):
        g.shot(pins=pins)
    assert second["state"] == g.state_json()


DEVICE_CHECKS = r"""
import os
from tools.simboard.flash import FileBlockDev, RamBlockDev, mount

def check(cond, what):
    print(what, "ok" if cond else "FAIL")

dev = RamBlockDev(4096, 16)
check(dev.is_blank(), "new device is blank")
check(dev.ioctl(4, 0) == 16 and dev.ioctl(5, 0) == 4096, "geometry")
check(mount(dev, "/a") is True, "blank device formatted")
with open("/a/x", "wb") as f:
    f.write(b"hello")
os.umount("/a")
check(dev.writes > 0 and dev.erases > 0 and dev.bytes_written > 0, "counters")
copy = RamBlockDev(4096, 16, image=dev.data)
check(mount(copy, "/b") is False, "formatted device mounted as it is")
check(open("/b/x").read() == "hello", "contents kept")
os.umount("/b")

junk = RamBlockDev(4096, 16, image=b"\x5a" * (4096 * 16))
try:
    mount(junk, "/c")
    check(False, "garbage refused")
except OSError:
    check(True, "garbage refused")

try:
    dev.readblocks(16, bytearray(16))
    check(False, "read past the end refused")
except OSError:
    check(True, "read past the end refused")

cut = RamBlockDev(4096, 16, cut_after_writes=3, torn=True)
cut.ioctl(6, 0)
r1 = cut.writeblocks(0, b"\x11" * 32, 0)
r2 = cut.writeblocks(0, b"\x22" * 32, 32)
r3 = cut.writeblocks(0, b"\x33" * 32, 64)
r4 = cut.writeblocks(0, b"\x44" * 32, 96)
r5 = cut.ioctl(6, 1)
buf = bytearray(128)
cut.readblocks(0, buf)
check((r1, r2) == (0, 0) and r3 != 0 and r4 != 0 and r5 != 0, "cut reported as failure")
check(bytes(buf) == b"\x11" * 32 + b"\x22" * 32 + b"\x33" * 16 + b"\xff" * 48,
      "third write half landed, fourth dropped")
check(cut.writes == 3 and cut.erases == 1 and cut.cut, "cut counters")

whole = RamBlockDev(4096, 16, cut_after_writes=1)
check(whole.writeblocks(2, b"\x01" * 8, 8) == 0, "last write lands whole")
check(whole.writeblocks(2, b"\x02" * 8, 0) != 0, "then nothing lands")
buf = bytearray(16)
whole.readblocks(2, buf)
check(bytes(buf) == b"\xff" * 8 + b"\x01" * 8, "whole last write only")

try:
    FileBlockDev("/nonexistent-dir-for-test/x.img", 4096, 4)
    check(False, "missing directory reported")
except OSError:
    check(True, "missing directory reported")
"""


def test_block_devices():
    proc = upy.run(["-c", DEVICE_CHECKS], heapsize="2M", timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) == 15
    failed = [line for line in lines if not line.endswith(" ok")]
    assert not failed


def test_image_of_the_wrong_size_is_refused(tmp_path):
    path = tmp_path / "flash.img"
    path.write_bytes(b"\xff" * 4096 * 3)
    proc = upy.run(["-c", "from tools.simboard.flash import FileBlockDev\n"
                    "try:\n FileBlockDev(%r, 4096, 64)\nexcept ValueError as e:\n print(e)\n"
                    % str(path)], timeout=30)
    assert "expected 262144" in proc.stdout
    assert path.read_bytes() == b"\xff" * 4096 * 3  # left as it was
