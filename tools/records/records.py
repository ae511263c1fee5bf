"""The records of one database file, as the club app and the logger's reports use them.

    records = Records.open("games.db")       # the club app: names may be written
    records = Records.reading("games.db")    # export, stats: nothing is ever changed
    records.current_games()                  # each board's latest game, with its names
    records.games(day="2026-11-30", table="73696d", player="Anna", limit=100)
    records.game(12)                         # GameRecord: shots, series, chart, names
    records.set_names(12, ["Anna", "Ben"])   # game 12: board slot 1 and 2 ("" clears one)
    records.rename_player("Ana", "Anna")     # a misspelt name corrected everywhere
    records.players(), records.player_stats(), records.slot_stats()
    records.export_lines(None, "csv")        # the lines of `tools.logger export`

Reads go through the database's read-only connections (one per thread: the web server
reads from a pool of threads while a logger writes), writes through its one writer. The
functions it hands on are tools.records' own (game, names, stats, export); this is their
one object, so a page or a report holds one thing.
"""

import sqlite3

from tools.records import export, game, names, stats
from tools.records.database import Database


class Records:
    def __init__(self, database, writes=True):
        self.database = database
        self.writes = writes

    @classmethod
    def open(cls, path_or_database):
        """Records that names may be written to: the file must exist (a logger, or the
        club app at start-up, made it); the club's tables are made where missing."""
        database = path_or_database
        if not isinstance(database, Database):
            database = Database(path_or_database, create=False)
        database.make_club_tables()
        return cls(database)

    @classmethod
    def reading(cls, path_or_database):
        """Records that change nothing in the file (StoreError for a file not ours)."""
        database = path_or_database
        if not isinstance(database, Database):
            database = Database(path_or_database, create=False)
        return cls(database, writes=False)

    @property
    def path(self):
        return self.database.path

    @property
    def con(self):
        """This thread's read-only connection."""
        return self.database.reader()

    def close(self):
        self.database.close()

    # -- games ------------------------------------------------------------------------------

    def current_games(self):
        return game.current_games(self.con)

    def games(self, day=None, table=None, player=None, limit=None):
        return game.list_games(self.con, day, table, player, limit)

    def game(self, number):
        return game.read_game(self.con, number)

    def days(self):
        return game.days(self.con)

    def tables(self):
        return game.tables(self.con)

    def export_lines(self, number=None, fmt="json", day=None, table=None, player=None):
        return export.export_lines(self.con, number, fmt, day, table, player)

    # -- names ------------------------------------------------------------------------------

    def names(self, number):
        return names.names_of(self.con, number)

    def set_names(self, number, given):
        return names.set_names(self.database, number, given)

    def rename_player(self, old, new):
        names.rename_player(self.database, old, new)

    def players(self):
        return names.players(self.con)

    # -- statistics -------------------------------------------------------------------------

    def player_stats(self):
        return stats.player_stats(self.database, keep=self.writes)

    def slot_stats(self):
        return stats.slot_stats(self.con)

    # -- the PIN's strikes (tools.club.security.PinLimiter) --------------------------------

    def pin_tries(self):
        """(strikes, last, until) of the wrong PINs of every client together, as last
        kept; None when none was ever kept."""
        row = self.con.execute("SELECT strikes, last, until FROM club_pin_tries WHERE id=1"
                               ).fetchone()
        return None if row is None else tuple(row)

    def keep_pin_tries(self, strikes, last, until):
        try:
            with self.database.write(names.WRITE_BUSY_MS) as con:
                con.execute("INSERT OR REPLACE INTO club_pin_tries VALUES (1, ?, ?, ?)",
                            (strikes, last, until))
        except sqlite3.OperationalError:
            pass  # the logger held the file past the busy time: kept with the next one
