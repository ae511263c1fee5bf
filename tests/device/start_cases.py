"""Power-up of the real firmware.run.start on the simulated board (tests/test_start.py).

MicroPython only: the simulated board keeps its flash on littlefs (os.VfsLfs2). Each case
takes a state folder and runs in a process of its own (one case replaces run.Runner).
"""

import os

from device.support import check, write
from firmware import run
from tools.sim.board.board import FLASH_MOUNT, build


class Armed(Exception):
    pass


def never_armed(timeout):
    raise AssertionError("the watchdog was armed (%d ms)" % timeout)


def case_undo_held_at_power_up_is_safe_mode(state):
    sim = build(state_dir=state, make_watchdog=never_armed)
    sim.set_button(3, True)  # undo held while the board powers up
    check(run.start(sim.board) == "SAFE", "not safe mode")
    check(sim.visible().strip() == "5AFE", "display: %r" % sim.visible())
    check(os.listdir(FLASH_MOUNT + "/game") == [], "the game was loaded")


def case_watchdog_armed_after_the_game_is_loaded(state):
    seen = []

    def arm(timeout):
        seen.append((timeout, os.listdir(FLASH_MOUNT + "/game")))
        raise Armed()

    sim = build(state_dir=state, make_watchdog=arm)
    try:
        run.start(sim.board)
    except Armed:
        pass
    check(len(seen) == 1, "armed %d times" % len(seen))
    timeout, files = seen[0]
    check(timeout == 8000, "timeout %d" % timeout)
    check(files != [], "armed before the journal was written")


def case_standing_level_one_reads_through_the_board(state):
    # A board whose sensors read 1 while a pin stands: the firmware's own Board code
    # turns the fake pins' levels into the spot mask.
    sim = build(state_dir=state)
    write(FLASH_MOUNT + "/board.cfg", b'{"standing_level": 1}')
    os.umount(FLASH_MOUNT)
    sim = build(state_dir=state)
    check(sim.board.read_spots() == 0x1F, "all standing: %r" % sim.board.read_spots())
    sim.set_spot(3, False)
    check(sim.spot_pins[2].value() == 0, "a fallen pin reads 0 on this board")
    check(sim.board.read_spots() == 0x1B, "spot 3 down: %r" % sim.board.read_spots())


def case_exception_after_arming_shows_err_91_without_a_reset(state):
    class Watchdog:
        feeds = 0

        def feed(self):
            Watchdog.feeds += 1
            if Watchdog.feeds >= 3:
                raise Armed()

    sim = build(state_dir=state, make_watchdog=lambda timeout: Watchdog())

    class Broken(run.Runner):
        def run(self):
            raise OSError(28)  # say, ENOSPC from the flash

    run.Runner = Broken
    try:
        run.start(sim.board)
    except Armed:
        pass
    check(Watchdog.feeds == 3, "the watchdog was left unfed: a reset loop")
    check(sim.visible() == "Err   91", "display: %r" % sim.visible())


def case_colon_marker_key_reaches_clock_modules(state):
    from firmware.app import App
    from firmware.run import tick

    sim = build(state_dir=state)
    write(FLASH_MOUNT + "/board.cfg", b'{"colon_marker": true}')
    os.umount(FLASH_MOUNT)
    sim = build(state_dir=state)  # clock modules: a colon, no decimal points
    app = App(sim.board)
    app.boot(0)
    for t in range(0, 6000, 5):
        tick(app, t)
    check(sim.visible() == "  : 0   0", "player 1's turn on the colon: %r" % sim.visible())
