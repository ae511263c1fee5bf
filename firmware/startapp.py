"""The application made and its game read, once the power-up has built the board and been
dropped (firmware.run.start calls it, then drops this module too).

    app = startapp.make(board, clock, rooms)   # the App, its game read, the watchdog armed

A heap too small for the application's code, the App or its game shows Err 93, or starts
a networked board again without its link (firmware.powerup.no_room, loaded again for it
once the link is let go: the power-up's code is not held while the application is made).
"""

import gc

from firmware import errors
from rules_core.game import SPARE

try:
    from micropython import const
except ImportError:  # CPython: the integer itself
    const = int

_CHUNK_BYTES = const(624)  # rules_core.game's (tests/test_journal.py checks it)

# The application's own modules (firmware.app and what only it imports), and the rules and
# the game's reader it loads: dropped again when the heap runs out before the game starts,
# to leave room for saying so (firmware.powerup.no_room drops them by these prefixes).
APP_MODULES = ("firmware.app", "firmware.screens", "firmware.sound", "firmware.menu",
               "boardlib.journal", "boardlib.inputs", "boardlib.calls", "boardlib.buzzer",
               "rules_core.snapshot")


def make(board, clock, rooms):
    """The App with its game loaded and the watchdog armed. `rooms`: what a networked
    board kept from power-up (firmware.powerup.ROOM), let go one at a time, the last
    first: before the application's code is loaded, before the App is made, before its
    game is read, before a TLS board's context is made."""
    try:
        app = _make(board, clock, rooms)
    except MemoryError as exc:  # the code and the game do not fit this board's heap
        # What the failed start made went with _make's frame: the half-made App, the game
        # read and the readers' and application's code its names held.
        del rooms[:]
        del SPARE[:]  # the chunks made for the game's history
        # Each step of the way out may find no room either (a heap grown into all the
        # ESP-IDF's regions has none to grow by: docs/esp32.md): then Err 93 at once, from
        # the screen made at start-up, not a traceback at the REPL with nothing shown
        try:
            networked = _drop_link(board)
            try:  # the pins' interrupts would keep the half-made application
                board.watch_inputs(None, None)
            except Exception:  # noqa: BLE001 - pins without interrupts: nothing held
                pass
            errors.forget(APP_MODULES)  # room for the power-up's code again
            gc.collect()
            from firmware import powerup

            powerup.no_room(board, exc, APP_MODULES, networked)
        except MemoryError:
            pass
        errors.halt(board, exc, errors.NO_MEMORY_SCREEN)
    board.arm_watchdog()  # after the journal replay: a slow boot must not reset the board
    return app


def _drop_link(board):
    """True for a networked board, which starts again without its link: the link goes now
    (its code and umqtt's, its client, buffers and TLS context), so that the power-up's
    code finds room to be loaded again for that. Held, it left none in a heap the App had
    just run out of: Err 93 for good, and the stored game never played
    (docs/performance.md, "Starting again without the link"). A function of its own:
    nothing of the link stays on the caller's stack for the collector to find."""
    if board.net is None:
        return False
    board.net._tls = None
    board.net = board.link = None
    errors.forget(("boardlib.mqttlink", "boardlib.netstream", "boardlib.netgate",
                   "boardlib.framesign", "umqtt.simple", "umqtt"))
    return True


def _make(board, clock, rooms):
    """make()'s App: what it holds while it is made goes with this frame if it fails."""
    _let_go(rooms)  # the code's (its class's dict grows in blocks of up to 1 KB)
    from firmware.app import App

    # The stored game is read before the App is made, in the application's room and
    # the game's, and the readers' code (boardlib.journal_load and rules_core.resume,
    # about 8 KB of heap) goes again before the App takes what it left. Read as the
    # App booted, beside it, a stored game found no room on a networked board's stock
    # ESP32 heap: every start but a new board's first went without the link
    # (docs/performance.md, "A stored game read before the App is made").
    _let_go(rooms)  # the application's
    _let_go(rooms)  # the game's
    # A TLS board's context is made first, in its room and from the CA power-up read:
    # the CA's bytes and what the room has over go before the reading, which was that
    # short of room beside them with a game of 100 or 300 shots stored ("A TLS board's
    # stored game", ibid.).
    _tls_first(board.net, rooms)
    # So is one of the history chunks power-up made for the game to grow into, made
    # again once the readers are gone (the next one: a game that reaches it reads
    # without its room for the next events, rules_core.resume).
    lent = len(SPARE) > 1
    if lent:
        SPARE.pop()
        gc.collect()
    from boardlib import journal_load
    from boardlib.journal import READERS, stores

    gc.collect()  # what loading the readers' code left, before the reading fills holes
    read = journal_load.read(stores(board.data_dir))
    del journal_load
    errors.forget(READERS)
    gc.collect()
    if lent:
        try:
            SPARE.append(bytearray(_CHUNK_BYTES))
        except MemoryError:  # the game makes it when it needs it
            pass
    app = App(board, read)
    del read
    app.boot(clock())
    net = board.net
    if net is not None and net.bufs is None:
        # the network link's stream buffers, kept for every connection: made now, in
        # the heap the game has left, before the first connection's code comes
        from boardlib.netstream import buffers

        net.bufs = buffers()
    # a board given TLS settings whose link was not made (they were refused, or it
    # found no room) still kept the TLS room and the CA: let them go
    del rooms[:]
    return app


def _tls_first(net, rooms):
    """A board over TLS: its TLS context made now, before the game is read and the first
    connection's code comes, in the room power-up kept for it and from the CA certificate
    power-up read (firmware.powerup, ROOM), and kept for every connection
    (boardlib.nettls.prepare); the module goes again, as the link loads it only while it
    connects. A context that finds no room is made at the first connection, as before; a
    board without TLS holds nothing of it."""
    if net is None or not net.net["tls"]:
        return
    ca = None
    try:
        from boardlib import nettls  # its code in the application's and game's rooms

        if rooms:  # the CA's bytes and the context's room: let go for the context
            ca = rooms.pop()[0]
            gc.collect()
        nettls.prepare(net, ca)
    except MemoryError:  # the module itself found no room
        pass
    from boardlib.netstream import forget

    forget("nettls")
    gc.collect()


def _let_go(rooms):
    """The last room kept is let go and collected: a free block for what comes next."""
    if rooms:
        rooms.pop()
        gc.collect()
