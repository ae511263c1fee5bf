"""Host logger for the scoreboard's serial link (protocol: docs/protocol.md).

    python -m tools.logger --port /dev/ttyUSB1 [--port ...] --db games.db [--live]
        [--new-game ddbu:40 [--replace]]   # the board asks its players unless --replace
        [--new-game ceb:60:3:teams]        # a ceb match of two-man teams
    python -m tools.logger --mqtt mqtt://logger:PW@HOST --keys keys.txt --db games.db \
        [--new-game ddbu:40 [--replace] [--board ID]]   # signed, to that board (docs/network.md)
    python -m tools.logger export --db games.db [--game N] [--format json|csv]
        [--day YYYY-MM-DD] [--table BOARD] [--player NAME]   # as the club's Results page
    python -m tools.logger stats --db games.db
    python -m tools.logger view --db games.db [--once]

In-process (the simulator does this):

    from tools import logger
    logger.run([pty_path], "games.db", stop_when=lambda lg: lg.latest_final() == expected)
"""

from tools.logger.core import Logger, run  # noqa: F401
from tools.logger.store import Store  # noqa: F401
