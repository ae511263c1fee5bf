"""What the board does once at power-up, before its loop (firmware.run.start calls it, then
drops this module with the other boot modules: a playing board does not hold it).

    app = powerup.boot(board, clock)   # the App, its game read; or a str: why not

In order (docs/esp32.md says why): the board is built (the ESP32's, firmware.hw, unless one
is given: the simulator's); too old a MicroPython shows Err 92; `undo` held down is safe
mode (SAFE on the display, no game, no watchdog, the REPL free, e.g. to fix /board.cfg
after `link: "uart0"`); otherwise the game is loaded (journal replay), then the watchdog
is armed. The application's code is loaded before the modules that build the board,
which are dropped (BOOT_MODULES, below) before the game is read. A heap too small
for the code and the game shows Err 93 (made at start-up: firmware.errors.NO_MEMORY_SCREEN).
"""

import sys

from boardlib import layout
from firmware import errors
from firmware.board import UNDO_BUTTON

SAFE_WORD = "SAFE"
# The application's own modules (firmware.app and what only it imports): dropped again when
# the heap runs out before the game starts, to leave room for saying so.
_APP_MODULES = ("firmware.app", "firmware.screens", "firmware.sound", "boardlib.journal",
                "boardlib.inputs", "boardlib.calls")

# Used once, at power-up: firmware.powerup (the checks and the start of the game), and to
# build the ESP32 board firmware.hw and firmware.assemble, the board profile and the
# configuration file's reader and checks, the `net` settings' too (boardlib.netconfig: a
# networked board checks them at boot, and the link keeps the checked values, not the
# checks); tools.bench counts them apart, as boot_mpy_bytes.
BOOT_MODULES = ("firmware.powerup", "firmware.hw", "firmware.assemble",
                "firmware.boards.esp32_devkit", "boardlib.config", "boardlib.netconfig")

# A networked board's room for the application (made before its code is loaded) and for the
# game (read after), kept from power-up, while the heap is still in large pieces, and let go
# just before each is made: the network link's and the board's blocks, made in between, leave
# the rest of the heap in pieces too small for them (docs/performance.md, "The networked
# board on the ESP32's heap, step by step").
_APP_ROOM = 2048
_GAME_ROOM = 5120
_ROOM = []  # [game's room, application's room] while they are kept


def boot(board, clock):
    """The App with its game loaded and the watchdog armed, or a str when the game does
    not start (too old a MicroPython, safe mode)."""
    if board is None:
        board = _build()
    old = too_old()
    if old is not None:  # Err 92, and the REPL free: nothing of the game starts
        errors.show(board, errors.MICROPYTHON_TOO_OLD)
        print("pinboard: " + old)
        return old
    word = hold_word(board)
    if word is not None:
        show_text(board, word)
        print("pinboard: %s: the firmware is not running, the REPL is free" % word)
        return word
    had = set(sys.modules)
    try:
        from firmware.app import App

        _let_room_go()  # the application's
        app = App(board)
        _let_room_go()  # the game's
        app.boot(clock())
    except MemoryError as exc:  # the code and the game do not fit this board's heap
        del _ROOM[:]
        try:  # the pins' interrupts would keep the half-made application
            board.watch_inputs(None, None)
        except Exception:  # noqa: BLE001 - pins without interrupts: nothing held
            pass
        _forget(had, ("rules_core",) + _APP_MODULES)  # what the failed start left
        if board.net is None:
            errors.halt(board, exc, errors.NO_MEMORY_SCREEN)
        # The game comes first: a networked board starts again at once without its
        # network link (start_without, which leaves /net.noroom)
        start_without(errors.NO_MEMORY)
        # the flash took no file: no second start
        errors.halt(board, exc, errors.NO_MEMORY_SCREEN)
    board.arm_watchdog()  # after the journal replay: a slow boot must not reset the board
    return app


def hold_word(board):
    """SAFE when undo is held at power-up, else None: run the game."""
    if board.read_buttons() & (1 << UNDO_BUTTON):
        return SAFE_WORD
    return None


def show_text(board, text):
    if board.display is not None:
        buf = bytearray(8)
        layout.text(buf, text)
        board.display.show(buf)


def too_old(version=None):
    """A sentence when this MicroPython is older than the firmware supports, else None."""
    version = tuple(version or sys.implementation.version[:3])
    if version >= errors.MICROPYTHON_OLDEST:
        return None
    return ("MicroPython %s is too old for this firmware: flash %s or newer "
            "(docs/building.md)" % (".".join(str(v) for v in version),
                                    ".".join(str(v) for v in errors.MICROPYTHON_OLDEST)))


def _build():
    """The ESP32 board (firmware.hw); then BOOT_MODULES are forgotten, so that nothing
    holds them once the board is built and the collector can take them."""
    # The rules first, from here: theirs is the deepest chain of imports (rules_core, its
    # game, saved state, settings, each rules system), and each nested import takes C
    # stack; under hw, assemble and the configuration's reader it would start three
    # levels deeper (the application keeps rules_core loaded in any case). The
    # application's own modules come after the board is built and its builders dropped:
    # loaded before, they left the configuration's reader no 2 KB block on a 32-bit
    # ESP32 heap (the twin: tests/test_net_versions.py), though the import peak measured
    # without building a board was lower (docs/performance.md).
    try:
        no_net = _net_first()
        from firmware import hw

        networked = not no_net and "net" in hw.read_given()
        if networked:
            # The frame seal is compiled from its source (viper, docs/esp32.md): first,
            # while the heap is whole, so that its compilation's pieces do not split what
            # the board keeps later.
            import boardlib.framesign  # noqa: F401
        hw.made_first()  # the display before the rest: Err 93 always has one to show on
        if networked:
            _ROOM.append(bytearray(_GAME_ROOM))
            _ROOM.append(bytearray(_APP_ROOM))
        import rules_core  # noqa: F401

        if no_net:
            hw.NETWORK = False
        board = hw.build()
    except MemoryError as exc:  # not even the board fits: the display alone says so
        if _ROOM:  # beside the rooms kept for the link's sake: again, without the link
            del _ROOM[:]
            start_without(errors.NO_MEMORY)
        _no_room_to_build(exc)
    if no_net:
        board.config_error = board.config_error or errors.NO_MEMORY
    forget(BOOT_MODULES)
    if _ROOM:
        import gc

        gc.collect()  # the builders' code is free before the application's comes
    return board


def start_without(code, no_room="/net.noroom"):
    """The game (or the board, beside the rooms kept for it) did not fit beside the network
    link: say so, leave `no_room`, and start the board again at once (a soft reset), which
    then goes without the link and shows `code` once. What the link and the half-made
    application leave in the heap (names, pieces) would be in the game's way of a second
    try here. Returns (and the board halts) when the flash takes no file, or the heap not
    even the file's buffer: Err 93 is then shown for good, not a traceback on a blank
    display."""
    print("pinboard: no memory for the network link: playing without it (Err %d)" % code)
    try:
        with open(no_room, "w") as f:
            f.write("the game did not fit beside the network link\n")
    except (OSError, MemoryError):
        return
    import machine

    machine.soft_reset()


def _let_room_go():
    """The last room kept (_ROOM) is let go and collected: a free block for what comes
    next."""
    if _ROOM:
        _ROOM.pop()
        import gc

        gc.collect()


def _net_first(no_room="/net.noroom"):
    """True (once) when the last start found no room for the game beside the network link
    (start_without left `no_room`): this start goes without it."""
    import os

    try:
        os.remove(no_room)
        return True
    except OSError:
        return False


def _forget(had, prefixes=()):
    """Drop the modules loaded since `had` and those whose names begin with one of
    `prefixes` (what a failed start left, half made), and collect: room to go on, or at
    least to say so. (A loop, not str.startswith's tuple: 1.24 has no tuple there.)"""
    import gc

    # Those named whole first, which takes no memory: the list of every module's name
    # below is made after that collection, on a heap that just ran out.
    for name in prefixes:
        sys.modules.pop(name, None)
    gc.collect()
    try:
        names = list(sys.modules)
    except MemoryError:  # the modules dropped above are what there was room to drop
        return
    for name in names:
        drop = name not in had
        for prefix in prefixes:
            drop = drop or name.startswith(prefix)
        if drop:
            sys.modules.pop(name, None)
    gc.collect()


class _Bare:
    """The display alone, where the board could not be built (no watchdog runs yet): the
    one made first at power-up (firmware.hw.made_first), or, when the heap ran out even
    for that, made again at each try to show the error (what was in the way may be
    garbage by now)."""

    def __init__(self):
        self.wdt = self

    @property
    def display(self):
        from firmware import hw

        return hw.made_first()

    def feed(self):
        pass


def _no_room_to_build(exc):
    """Drop what the failed build loaded, show Err 93 on the display alone
    (firmware.hw.made_first) for good."""
    # the network link's modules too (a networked board builds its link first): the
    # display's driver may still have to be compiled from its source, in what they held
    _forget(sys.modules, ("rules_core", "firmware.assemble", "firmware.board",
                          "boardlib.config", "boardlib.shot", "boardlib.net",
                          "boardlib.mqttlink", "boardlib.framesign", "boardlib.link",
                          "boardlib.replstream", "umqtt") + _APP_MODULES)
    errors.halt(_Bare(), exc, errors.NO_MEMORY_SCREEN)


def forget(names):
    """Drop the modules `names` (dotted) from sys.modules and from their packages."""
    for name in names:
        sys.modules.pop(name, None)
        parent, _, child = name.rpartition(".")
        try:  # an imported submodule is also an attribute of its package
            delattr(sys.modules[parent], child)
        except (KeyError, AttributeError):
            pass
