"""What the board does once at power-up, before it makes its application (firmware.run.start
calls it, then drops this module with the other boot modules, before the application's
code is loaded: neither the application's start nor a playing board holds it).

    board = powerup.boot(board, clock)   # the board built; or a str: why no game starts
    powerup.no_room(board, exc, had, networked)  # the application did not fit: Err 93,
                                                 # or again without the network link

In order (docs/esp32.md says why): the board is built (the ESP32's, firmware.hw, unless one
is given: the simulator's); too old a MicroPython shows Err 92; `undo` held down is safe
mode (SAFE on the display, no game, no watchdog, the REPL free, e.g. to fix /board.cfg
after `link: "uart0"`); otherwise firmware.run makes the application, loads the game
(journal replay) and arms the watchdog, once the modules that build the board are dropped
(BOOT_MODULES, below). A heap too small for the code and the game shows Err 93 (made at
start-up: firmware.errors.NO_MEMORY_SCREEN).
"""

import sys

from boardlib import layout
from firmware import errors
from firmware.board import UNDO_BUTTON

try:
    from micropython import const
except ImportError:  # CPython: the integer itself
    const = int

# Used once, at power-up: firmware.powerup (the checks) and firmware.startapp (the start of
# the game, dropped by firmware.run once the game is read), and to build the ESP32 board
# firmware.hw and firmware.assemble, the board profile and the configuration file's reader
# and checks, the `net` settings' too (boardlib.netconfig: a networked board checks them at
# boot, and the link keeps the checked values, not the checks); tools.bench counts them
# apart, as boot_mpy_bytes.
BOOT_MODULES = ("firmware.powerup", "firmware.hw", "firmware.assemble",
                "firmware.boards.esp32_devkit", "boardlib.config", "boardlib.netconfig",
                "firmware.startapp")

# A networked board's room for the application (made before its code is loaded) and for the
# game (read after), kept from power-up, while the heap is still in large pieces, and let go
# just before each is made: the network link's and the board's blocks, made in between, leave
# the rest of the heap in pieces too small for them (docs/performance.md, "The networked
# board on the ESP32's heap, step by step"; the sizes: "The twin's names, and the rooms
# again").
_APP_ROOM = const(2560)
_GAME_ROOM = const(6144)
_GAME_LEAST = const(1024)  # the game's room beside the chunks made for it
_CODE_ROOM = const(2560)
# A board over TLS: the room its TLS context is made in (an SSLContext object holds Mbed
# TLS's contexts: 1,764 bytes on a 32-bit 1.29 with Mbed TLS 3.6), let go once the
# application's code is loaded, before the game is read (firmware.startapp); the CA
# certificate it is given is read before the rooms, while the heap is whole.
_TLS_ROOM = const(2048)
# The largest CA certificate read at power-up: a CA's DER is about 1 KB (the club's, made
# by tools.broker, 769 bytes); a file of any size must not stop the game from starting.
_CA_MOST = const(4096)
# [TLS's (with TLS settings), game's, application's, code's] while they are kept
# (firmware.startapp)
ROOM = []
# The stored game's history chunks (rules_core.game, 624 bytes each) are made before the
# board is built, while the heap is still in large pieces, and handed to the game's module
# (rules_core.game.SPARE) for the game to take as it is read: a 950-shot game (eight
# chunks) read back after the application's code found no free piece of 624 bytes in a
# stock ESP32's heap (tests/test_net_versions.py, the long games). At most 16 (2,048
# events, 10 KB): a file that says more is not the board's to believe before it is read.
_CHUNK_BYTES = const(624)  # rules_core.game's (tests/test_journal.py checks it)
_MOST_CHUNKS = const(16)


def boot(board, clock):
    """The board built and checked, its rooms kept (ROOM), for firmware.run to make the
    App in once this module is dropped; or a str when the game does not start (too old a
    MicroPython, safe mode)."""
    if board is None:
        board = _build()
    old = too_old()
    if old is not None:  # Err 92, and the REPL free: nothing of the game starts
        errors.show(board, errors.MICROPYTHON_TOO_OLD)
        print("pinboard: " + old)
        return old
    if board.read_buttons() & (1 << UNDO_BUTTON):  # undo held down: safe mode
        if board.display is not None:
            buf = bytearray(8)
            layout.text(buf, "SAFE")
            board.display.show(buf)
        print("pinboard: SAFE: the firmware is not running, the REPL is free")
        return "SAFE"
    return board


def no_room(board, exc, app_modules, networked):
    """The application or its game did not fit the heap (firmware.startapp made them, this
    module loaded again for it): drop what the failed start left, then a `networked` board
    (its link already let go) starts again without its link (start_without), any other
    shows Err 93 for good. `app_modules`: the application's
    (firmware.startapp.APP_MODULES)."""
    _forget(sys.modules, ("rules_core", "boardlib.journal") + app_modules)
    if networked:
        # The game comes first: a networked board starts again at once without its
        # network link (start_without, which leaves /net.noroom)
        start_without(errors.NO_MEMORY)
        # the flash took no file: no second start
    errors.halt(board, exc, errors.NO_MEMORY_SCREEN)


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
        import os

        # True (once) when the last start found no room for the game beside the network
        # link (start_without left /net.noroom): this start goes without it
        no_net = True
        try:
            os.remove("/net.noroom")
        except OSError:
            no_net = False
        from firmware import hw

        given = hw.read_given()
        networked = not no_net and "net" in given
        if networked:
            # The frame seal is compiled from its source (viper, docs/esp32.md): first,
            # while the heap is whole, so that its compilation's pieces do not split what
            # the board keeps later.
            import boardlib.framesign  # noqa: F401
        hw.made_first()  # the display before the rest: Err 93 always has one to show on
        made = _keep_rooms(given["net"] if networked else None)
        import rules_core  # (rules_core.game with it)

        rules_core.game.SPARE.extend(made)
        del made

        if no_net:
            hw.NETWORK = False
        board = hw.build()
    except MemoryError as exc:  # not even the board fits: the display alone says so
        if ROOM:  # beside the rooms kept for the link's sake: again, without the link
            del ROOM[:]
            start_without(errors.NO_MEMORY)
        # What the failed build loaded goes, and Err 93 is shown on the display alone
        # (firmware.hw.made_first) for good; the network link's modules too (a networked
        # board builds its link first): the display's driver may still have to be
        # compiled from its source, in what they held
        _forget(sys.modules, ("rules_core", "firmware.assemble", "firmware.board",
                              "boardlib.config", "boardlib.shot", "boardlib.net",
                              "boardlib.mqttlink", "boardlib.framesign", "boardlib.link",
                              "boardlib.replstream", "umqtt", "firmware.app",
                              "firmware.screens", "firmware.sound", "boardlib.journal",
                              "boardlib.inputs", "boardlib.calls"))
        errors.halt(_Bare(), exc, errors.NO_MEMORY_SCREEN)
    if no_net:
        board.config_error = board.config_error or errors.NO_MEMORY
    errors.forget(BOOT_MODULES)
    import gc

    gc.collect()  # the builders' code is free before the application's comes
    return board


def _keep_rooms(net):
    """The rooms (ROOM) at the top of the heap's largest free block, and above them the
    stored game's history chunks, returned (as many as its game.his holds whole, the
    larger copy's, and two: the one it goes on in, and the next; for a game of fewer than
    128 events, whose history its snapshot holds, the two alone; none when no game is
    stored). What the board builds next goes below them, and what the application and its
    game make once the rooms are let go fills the holes below first, so that only the
    blocks too large for those come to the rooms. Each room is a tuple (one block, its
    address its id()); one that lands in a hole below is kept there until the rooms are
    made, and another is tried. (On the ESP32 from 1.22 a try larger than the largest
    block makes the heap grow, py/gc.c gc_try_add_heap: the one growth the build makes
    anyway, made here.) `net`: a networked board's settings, as given, or None: no
    rooms. With TLS settings the first room is (the CA certificate's bytes, or None, and
    the TLS context's room)."""
    import gc
    import os

    from firmware import hw

    chunks = 0
    stored = False
    for copy in ("a", "b"):  # (names the journal has too: nothing new kept)
        try:
            chunks = max(chunks, os.stat("/".join((hw.profile.DATA_DIR, copy, "game.his")))[6]
                         // _CHUNK_BYTES)
        except OSError:  # none: a short game, or none stored
            pass
        try:
            stored = stored or os.stat("/".join((hw.profile.DATA_DIR, copy, "game.jrn")))[6] > 0
        except OSError:
            pass
    chunks = min(chunks + 2, _MOST_CHUNKS) if chunks or stored else 0
    ca = None
    tls = isinstance(net, dict) and net.get("tls") is True
    if tls:
        try:  # in one block of the file's size, as boardlib.nettls.read_ca reads it
            size = os.stat("/ca.der")[6]
            if size <= _CA_MOST:  # a larger file is left to the link (Err 74 or 76 there)
                with open("/ca.der", "rb") as f:
                    ca = f.read(size)
        except (OSError, MemoryError):  # none, or no room: the link says so when it connects
            pass
    gc.collect()
    low, high = 0, gc.mem_free()
    while high - low > 64:  # the largest free block (a failed try takes nothing)
        mid = (low + high) // 2
        try:
            bytearray(mid)
            low = mid
        except MemoryError:
            high = mid
    gc.collect()
    word = 4 if sys.maxsize >> 32 == 0 else 8
    # (the game's room less the chunks made for it: the heap the board keeps for its game
    # is the same, and a game stored long enough for more finds room for its reading)
    game = max(_GAME_ROOM - chunks * (_CHUNK_BYTES + 16), _GAME_LEAST)
    sizes = (((_TLS_ROOM,) if tls else ()) + (game, _APP_ROOM, _CODE_ROOM)
             if net is not None else ())
    # the chunks last, at the very top: kept for good, while the rooms below them are let
    # go as one free piece
    below = (None,) * max(0, (low - sum(sizes) - chunks * (_CHUNK_BYTES + 16) - 512) // word)
    lower = []
    # (written out, not a call: handed to a call, `below` was still held after `del`,
    # the collector reading the C stack conservatively, and the heap stayed full)
    for size in sizes:
        for _ in range(8):
            room = (None,) * (size // word - 2)
            if id(room) > id(below):
                break
            lower.append(room)  # a hole below: filled, for now
        ROOM.append(room)
    made = []
    try:  # (a bytearray's object lands in any hole: its 624 bytes where they fit, above)
        for _ in range(chunks):
            made.append(bytearray(_CHUNK_BYTES))
    except MemoryError:  # no room for the rest: the game makes them when it needs them
        pass
    if tls:
        ROOM[0] = (ca, ROOM[0])
    del below, lower
    gc.collect()
    return made


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
