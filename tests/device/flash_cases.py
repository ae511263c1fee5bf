"""tools.sim.board.flash, the simulated board's flash, as littlefs sees it.

MicroPython only: the block devices exist for os.VfsLfs2, which CPython does not have.
Run by tests/test_journal_flash.py.
"""

import os

from device.support import check
from tools.sim.board.flash import FileBlockDev, RamBlockDev, mount

HEAPSIZE = "2M"


def image_game(path, step):
    """Boot from the flash image at `path`: resume or start a CEB game, score `step` shots."""
    from boardlib import journal_load
    from boardlib.journal import GameStore
    from rules_core import Game, events

    dev = FileBlockDev(path, 4096, 64)
    out = {"formatted": mount(dev, "/flash")}
    store = GameStore("/flash/game")
    game, out["status"] = journal_load.load(store)
    if game is None:
        game = Game("ceb", distance=(60, 60), sets=3, first=2)
        store.new_game(game)
    for pins in (1, 4, 0, 31)[:step]:
        rec = events.encode_shot(pins, 0, ())
        game.apply(rec)
        store.record(game, rec)
    out["state"] = game.state_json()
    store.close()
    os.umount("/flash")
    dev.close()
    return out


def wrong_size_message(path):
    """What FileBlockDev says about an image of the wrong size, or None if it takes it."""
    try:
        FileBlockDev(path, 4096, 64)
    except ValueError as e:
        return str(e)
    return None


def case_ram_device_formats_counts_and_keeps():
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
    with open("/b/x") as f:
        check(f.read() == "hello", "contents kept")
    os.umount("/b")


def case_garbage_and_bad_addresses_are_refused():
    junk = RamBlockDev(4096, 16, image=b"\x5a" * (4096 * 16))
    try:
        mount(junk, "/c")
        check(False, "garbage refused")
    except OSError:
        pass
    dev = RamBlockDev(4096, 16)
    try:
        dev.readblocks(16, bytearray(16))
        check(False, "read past the end refused")
    except OSError:
        pass
    try:
        FileBlockDev("/nonexistent-dir-for-test/x.img", 4096, 4)
        check(False, "missing directory reported")
    except OSError:
        pass


def case_power_cut_tears_the_last_write():
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


def case_power_cut_after_a_whole_write():
    whole = RamBlockDev(4096, 16, cut_after_writes=1)
    check(whole.writeblocks(2, b"\x01" * 8, 8) == 0, "last write lands whole")
    check(whole.writeblocks(2, b"\x02" * 8, 0) != 0, "then nothing lands")
    buf = bytearray(16)
    whole.readblocks(2, buf)
    check(bytes(buf) == b"\xff" * 8 + b"\x01" * 8, "whole last write only")
