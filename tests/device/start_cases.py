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


# What a networked board's heap holds when its App finds no room, and what loading the
# power-up's code again takes: each about twice the board's on the unix port's heap
# (docs/performance.md). The power-up's code comes in pieces, as a module's does.
_LINK_CODE_BYTES = 8192  # boardlib.mqttlink and umqtt
_LINK_BYTES = 8192  # the link's client, buffers and TLS context
_APP_CODE_BYTES = 8192  # firmware.app, held by the name the start took its class by
_LEFT_BYTES = 8192  # free once the board is built, before its App
_POWER_UP_BYTES = 26624
_PIECE = 1024


class _Halted(Exception):
    pass


class _Watchdog:
    def feed(self):
        raise _Halted()  # errors.halt: Err 93 shown for good


class _Module:
    """A module as the heap holds it: its code."""

    def __init__(self, size):
        self.code = bytearray(size)


class _Link:
    def __init__(self):
        self.net = {"tls": False}
        self._tls = None
        self.bufs = bytearray(_LINK_BYTES)


class _PowerUp:
    """The power-up's code loaded again (firmware.powerup.no_room): its heap, then the soft
    reset that starts the board again (the twin's machine.soft_reset)."""

    def __init__(self):
        self.started_again = []

    def no_room(self, board, exc, app_modules, networked):
        code = []
        for _ in range(_POWER_UP_BYTES // _PIECE):
            code.append(bytearray(_PIECE))
        self.started_again.append((networked, board.net, board.link))
        raise SystemExit()


def _networked_board_whose_app_finds_no_room(state):
    """The simulated board given a network link and an application whose App raises
    MemoryError, made here so that no frame of the caller's holds what they hold (the
    collector reads a function's stack conservatively, the slots of values it no longer
    uses too)."""
    import sys

    import firmware

    sim = build(state_dir=state)
    board = sim.board
    sys.modules["boardlib.mqttlink"] = _Module(_LINK_CODE_BYTES)
    board.net = _Link()
    board.link = (board.link, board.net)  # the serial link and the network's, both
    board.wdt = _Watchdog()

    class NoRoom:
        code = bytearray(_APP_CODE_BYTES)

        def __init__(self, *args):
            raise MemoryError("memory allocation failed, allocating 584 bytes")

    application = _Module(0)
    application.App = NoRoom
    sys.modules["firmware.app"] = firmware.app = application
    power_up = _PowerUp()
    sys.modules["firmware.powerup"] = firmware.powerup = power_up
    return board, power_up


def case_a_networked_board_whose_app_finds_no_room_starts_again_without_its_link(state):
    """The App finds no room beside a networked board's link, and the heap then has too
    little for the power-up's code as well, which is loaded again to start the board
    without the link: the link's objects and code and the application's code are let go
    first, and the board starts again without the link (a soft reset), instead of showing
    Err 93 for good with its stored game never played."""
    import gc
    import sys

    from boardlib import journal, journal_load  # noqa: F401 - held: only the link is freed
    from firmware import startapp
    from rules_core import resume  # noqa: F401
    from tools.sim.board.heap import pin

    board, power_up = _networked_board_whose_app_finds_no_room(state)
    gc.collect()
    ballast = pin(_LEFT_BYTES)
    halted = False
    try:
        startapp.make(board, lambda: 0, [])
    except SystemExit:
        pass
    except _Halted:
        halted = True
    del ballast
    check(not halted, "Err 93 for good: no room for the power-up's code")
    started_again = power_up.started_again
    check(len(started_again) == 1, "started again %d times" % len(started_again))
    networked, net, link = started_again[0]
    check(networked, "started again as a board without a network link")
    check(net is None and link is None, "the link was held while the power-up loaded")
    check("boardlib.mqttlink" not in sys.modules, "the link's code was held")
