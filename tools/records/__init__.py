"""The host's records: the database file, one game record, its replay and statistics.

    from tools.records import Database, Records
    records = Records.open("games.db")       # over the file a logger writes
    record = records.game(12)                # GameRecord: final state, shots, names

The logger (tools.logger: it stores what boards send) and the club app (tools.club: it
shows and names the games) both sit on this package; neither imports the other. Modules:
database (the tables and every connection), replay (stored events through the rules
core), game (GameRecord and the queries), names (players at the tables), stats (totals
and statistics), export (JSON and CSV lines), records (Records: all of it as one object).

Words, the same in code, pages and docs: a **board** is one scoreboard, named by its
**board id** (hex; the `key` column of `boards`); the club's pages call it a **table**.
A **game** is known by its number (the row id; `game_no` is the board's own count,
`game_id` its identity). A **board state** is what the board says; stored, it is a
**claim**, judged against the stored events (proven, missing, disputed, stale); a
game's **final** state is its newest claim not disputed. A **key** is only ever a
board's secret for sealing frames and signing commands (docs/network.md).
"""

from tools.records.database import Database, StoreError
from tools.records.game import GameRecord
from tools.records.names import RecordError
from tools.records.records import Records

__all__ = ["Database", "GameRecord", "RecordError", "Records", "StoreError"]
