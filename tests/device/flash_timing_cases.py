"""The simulated flash's timing (tools/simboard/flash.py) and the board time it takes in
the simulator's timeline mode (tools/simboard/run.py). Run by tests/test_flash_timing.py.
"""

import os

from device.support import check, micropython_only
from tools.simboard.flash import TIMINGS, TYPICAL, RamBlockDev, Stall, mount, program_commands

HEAPSIZE = "8M"


def case_program_commands_are_cut_as_esp_idf_cuts_them():
    # at most 64 bytes a command, never across a 256-byte page
    check(program_commands(0, 32) == 1, "one small write")
    check(program_commands(0, 128) == 2, "littlefs's 128-byte cache: two commands")
    check(program_commands(224, 64) == 2, "32 bytes to the page's end, then 32 more")
    check(program_commands(4096, 4096) == 64, "a whole sector")
    check(program_commands(0, 0) == 0, "nothing")
    check(TIMINGS["typical"] == TYPICAL and TIMINGS["none"] is None, "names")


def case_every_erase_and_program_takes_its_time_and_waits_it():
    micropython_only("littlefs over the block device (os.VfsLfs2)")
    waited = []
    dev = RamBlockDev(4096, 16, timing=TYPICAL, wait=waited.append)
    mount(dev, "/t")
    with open("/t/x", "wb") as f:
        f.write(bytes(9000))  # three blocks of data
    os.umount("/t")
    check(dev.erases >= 3 and dev.writes > 0, "erased and programmed")
    check(sum(waited) == dev.busy_us, "every microsecond was waited, once")
    check(waited.count(TYPICAL[0]) == dev.erases, "45 ms each erase")
    programs = dev.busy_us - dev.erases * TYPICAL[0]
    check(programs >= dev.writes * TYPICAL[1], "each program at least one page's time")
    instant = RamBlockDev(4096, 16)
    mount(instant, "/u")
    os.umount("/u")
    check(instant.busy_us == 0 and instant.erases > 0, "without timing: no time")


def case_a_stall_hands_out_whole_steps_and_keeps_the_rest():
    dev = RamBlockDev(4096, 4)
    stall = Stall(dev, 5)
    dev.busy_us += 47000  # as an erase and a few programs would
    check(stall.take_ms() == 45, "whole steps")
    check(stall.take_ms() == 0, "nothing new")
    dev.busy_us += 3000
    check(stall.take_ms() == 5, "the 2 ms left over and 3 ms more make a step")


def timeline_steps(shots, timing):
    """The simulator's timeline mode plays `shots` shots: each step's board time, flash
    time (us) and erases, and what the game and the flash did."""
    micropython_only("the firmware on the simulated board")
    from tools.simboard import flashgap_device

    got = flashgap_device.measure(shots, timing)
    return {"polls": got["polls"], "compactions": got["compactions"], "shots": got["shots"],
            "gap_ms": got["gap_ms"]}
