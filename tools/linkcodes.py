"""The link's numbers by name, for the host: frame kinds, command kinds, flags, error codes.

    from tools.linkcodes import CMD_NEW_GAME, ERR_REFUSED, RULES
    wire = frames.encode(CMD_NEW_GAME, seq, ...)

The board holds the same numbers as private constants (`_NAME = const(N)` in
boardlib/link.py, and the few that firmware/app.py and boardlib/mqttlink.py use): folded
into the bytecode, they cost the board's heap no name. This table is the host's copy of
them, and tests/test_board_codes.py checks every one of the board's against it, so the two
cannot drift apart. The layouts they name are in docs/protocol.md.
"""

from rules_core.settings import RULES_IDS

PROTOCOL_VERSION = 2
HEARTBEAT_MS = 2000  # the board's heartbeat period

# Frames from the board.
HELLO = 0x01
STATE = 0x02
SHOT = 0x03
HEARTBEAT = 0x04
ERROR = 0x05
ACK = 0x06
UNDO = 0x07

# Commands from the host; the board's Link.poll() returns one of these, or NONE.
NONE = 0
CMD_NEW_GAME = 0x81
CMD_UNDO = 0x82
CMD_STATE = 0x83
CMD_PING = 0x84
CMD_HELLO = 0x85
CMD_EVENT = 0x86
CMD_LOGGED = 0x87
CMD_RESTORE = 0x88

# NEW_GAME flags.
REPLACE = 1  # replace an unfinished game without asking the players
TEAMS = 2  # a ceb match of two-man teams (CEB 28), not singles

# Error codes (the ERROR frame's first byte).
ERR_BAD_FRAME = 1
ERR_UNKNOWN_COMMAND = 2
ERR_BAD_LENGTH = 3
ERR_BAD_ARGUMENT = 4
ERR_REFUSED = 5
ERR_ASKED = 6
ERR_BUSY = 7  # the setup menu or the wiring check is open on the board
ERR_SENSOR = 16
ERR_CONFIG = 17
ERR_STORAGE = 18
ERR_INTERNAL = 19

RULES = RULES_IDS  # a rules id's number on the wire is its index
NO_REF = 0xFFFF  # an ERROR frame that answers no command
