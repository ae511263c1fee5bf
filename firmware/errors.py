"""Error codes the board shows as "Err NN" and sends to the host.

    from firmware import errors
    layout.error(buf, errors.JOURNAL_LOST)

| code | meaning |
|---|---|
| 1n | spot n dark for minutes (pin left lying, dead sensor): a fallen pin still scores |
| 2n | spot n's sensor flaps (changes far too often): not scored |
| 31 | the board configuration was unreadable: defaults are in use |
| 32 | a board configuration value was bad: its default is in use |
| 41 | events were lost on flash: the game resumed at its last intact record |
| 42 | the stored game could not be read at all: a new game was started |
| 43 | the flash is full: the game goes on but is not stored until there is room again |
| 44 | the flash fails to write: the game goes on, and is stored once a write works |
| 51 | undo with nothing left to take back |
| 61 | bad game settings from the host |
| 62 | unknown host command |
| 63 | network commands refused (bad signature, replayed, garbled); ERROR detail: the count |
| 71 | the WiFi could not be joined (wrong SSID or password, out of range); retried |
| 72 | the MQTT broker could not be reached, or stopped answering |
| 73 | the broker refused the board's user name or password |
| 74 | TLS: no CA certificate (`ca.der` beside board.cfg), or the broker's one refused |
| 75 | the broker's name could not be looked up (no DNS answer, or no such name); retried |
| 76 | no memory for the connection (code, TLS's buffers, frames): not the broker; retried |
| 91 | an error escaped the tasks: the board keeps showing this, fed, until reset |
| 92 | MicroPython too old for this firmware (older than MICROPYTHON_OLDEST): flash a newer one |
| 93 | out of memory while starting: the firmware does not fit this board's heap |
"""

import sys
import time

from boardlib import layout

try:
    from micropython import const
except ImportError:  # CPython: the integer itself
    const = int


# boardlib's own codes: the modules that report them hold them as private constants
# (no names in the heap), each checked against these by tests/test_board_codes.py.
_CONFIG_BAD = const(31)  # boardlib.config
_CONFIG_VALUE = const(32)
_COMMAND_REFUSED = const(63)  # boardlib.mqttlink
_WIFI = const(71)  # boardlib.netdial, boardlib.netlogin, boardlib.mqttlink
_BROKER = const(72)  # boardlib.netdial, netlogin, nettls, mqttlink
_BROKER_LOGIN = const(73)  # boardlib.netlogin
_TLS = const(74)  # boardlib.nettls
_BROKER_NAME = const(75)  # boardlib.mqttlink
_LINK_MEMORY = const(76)  # boardlib.mqttlink, boardlib.nettls

SENSOR_STUCK = const(10)
_SENSOR_FLAPS = const(20)
JOURNAL_CUT = const(41)
JOURNAL_LOST = const(42)
STORAGE_FULL = const(43)
STORAGE_FAILED = const(44)
NOTHING_TO_UNDO = const(51)
BAD_SETTINGS = const(61)
UNKNOWN_COMMAND = const(62)
_LOOP_FAILED = const(91)
MICROPYTHON_TOO_OLD = const(92)
NO_MEMORY = const(93)
# The oldest MicroPython the firmware runs on (docs/esp32.md, "Releases"; the same as
# tools/sim/board/esp32/releases.OLDEST, which deploy refuses older boards by).
MICROPYTHON_OLDEST = (1, 22, 0)


def is_storage(code):
    """True for the codes of the game's storage (4n): sent to the host as STORAGE errors."""
    return JOURNAL_CUT <= code < JOURNAL_CUT + 9


def sensor_code(sensors):
    """The code of the first faulty spot (spots counted from 1)."""
    for spot in range(1, sensors.count + 1):
        kind = sensors.fault_code(spot)  # 1 stuck, 2 flapping
        if kind:
            return kind * 10 + spot
    return 0


# Err 93, made when this module loads: a heap that later runs out may have no room even for
# the strings that drawing it takes (a new qstr pool is a block of its own).
NO_MEMORY_SCREEN = bytearray(8)
layout.error(NO_MEMORY_SCREEN, NO_MEMORY)
_FEED_MS = const(250)  # halt()'s feeding period


def show(board, code):
    """Err `code` on the display (or the screen `code` when it is one already); False when
    the display could not be written (a full heap, a broken display)."""
    if isinstance(code, int):
        buf = bytearray(8)
        layout.error(buf, code)
    else:
        buf = code
    try:
        board.display.show(buf)
        return True
    except Exception:  # a broken display, or no memory even for that: tried again
        return False


def halt(board, exc, code=_LOOP_FAILED):
    """Show Err 91 (or `code`, or a screen) and keep the watchdog fed until someone
    interrupts (Ctrl-C)."""
    import gc

    if hasattr(sys, "print_exception"):
        sys.print_exception(exc)
    else:
        print(repr(exc))
    try:
        import micropython

        micropython.kbd_intr(3)  # a uart0 link turned Ctrl-C off: give the owner it back
    except (ImportError, AttributeError):
        pass
    shown = show(board, code)
    tries = 0
    while True:
        board.wdt.feed()
        time.sleep_ms(_FEED_MS)
        if not shown and tries < 20:  # what was in the way may be garbage by now
            tries += 1
            gc.collect()
            shown = show(board, code)


def forget(names):
    """Drop the modules `names` (dotted) from sys.modules and from their packages: the
    power-up's code once the board is built, or the application's to make room for saying
    that it did not fit (Err 93)."""
    for name in names:
        sys.modules.pop(name, None)
        parent, _, child = name.rpartition(".")
        try:  # an imported submodule is also an attribute of its package
            delattr(sys.modules[parent], child)
        except (KeyError, AttributeError):
            pass
