"""Players' names at the tables: what a name is, who played a game, and their changes.

    name_key("STRASSE") == name_key("straße")      # one player
    clean_name("  Anna   Berger ")                 # "Anna Berger", or RecordError
    names_by_game(con, [12])                       # {12: ["Anna", None]}
    set_names(db, 12, ["Anna", "Ben"])             # game 12: board slot 1 and 2
    rename_player(db, "Ana", "Anna")               # corrected in every game
    players(con)                                   # every known name, A to Z

The names live in the club's tables (tools.records.database.CLUB_SCHEMA): a player is a
row of club_players, a game's board slot 1 or 2 is a row of club_seats, and every change
is a row of club_name_log. docs/club.md has the rules (what one player is, what may be a
name).
"""

import time
import unicodedata

NAME_MAX = 40
WRITE_BUSY_MS = 5000  # a name waits this long for a logger's write burst to end


class RecordError(ValueError):
    """A request the records refuse (a bad name, an unknown game); the text says why."""


def name_key(name):
    """What two names are compared by, everywhere (the names, the Players page, the
    filters, the statistics, `tools.logger export --player`): Unicode NFC, case folded
    (str.casefold: Иван is иван, Straße is STRASSE), NFC again. Two names with one key are
    one player; the name shown is the one first written (or renamed to)."""
    return unicodedata.normalize("NFC", unicodedata.normalize("NFC", name).casefold())


def clean_name(text):
    """A player's name as stored: Unicode NFC (é typed as e and an accent is é), spaces
    trimmed and collapsed; RecordError when it is too long or holds control characters.
    "" means no name."""
    if text is None:
        return ""
    if not isinstance(text, str):
        raise RecordError("a name is text")
    name = unicodedata.normalize("NFC", " ".join(text.split()))
    if len(name) > NAME_MAX:
        raise RecordError("a name is at most %d characters" % NAME_MAX)
    for ch in name:
        if unicodedata.category(ch)[0] == "C":
            raise RecordError("a name cannot hold control characters")
    if name[:1] in ("=", "+", "-", "@"):
        # a spreadsheet opening the CSV export would take it for a formula
        raise RecordError("a name cannot begin with =, +, - or @")
    return name


def named(con):
    """True when names were ever set in this file (the club's tables are there)."""
    return con.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND "
                       "name='club_seats'").fetchone() is not None


def names_by_game(con, games=None):
    """{game: [name 1 or None, name 2 or None]}; {} when no name was ever set in the file
    (the club's tables are missing: an export of an older database). ``games``: only
    these."""
    if not named(con):
        return {}
    sql = ("SELECT s.game, s.slot, p.name FROM club_seats s "
           "JOIN club_players p ON p.id = s.player")
    rows = []
    if games is None:
        rows = con.execute(sql).fetchall()
    else:
        keys = list(games)
        for at in range(0, len(keys), 500):  # SQLite's limit on bound parameters
            part = keys[at:at + 500]
            rows += con.execute(sql + " WHERE s.game IN (%s)" % ",".join("?" * len(part)),
                                part).fetchall()
    out = {}
    for game, slot, name in rows:
        out.setdefault(game, [None, None])[slot - 1] = name
    return out


def names_of(con, game):
    return names_by_game(con, [game]).get(game, [None, None])


def players(con):
    """Every known name, A to Z (the names form offers them); one a player."""
    if not named(con):
        return []
    seen = {}
    for (name,) in con.execute("SELECT name FROM club_players ORDER BY id"):
        seen.setdefault(name_key(name), name)
    return [seen[key] for key in sorted(seen)]


def player_ids(con, name):
    """The rows of every player whose name has ``name``'s key (one, once the file was set
    up by this version; a database an older club app wrote may hold more)."""
    if not named(con):
        return []
    key = name_key(clean_name(name))
    return [pid for pid, known in con.execute("SELECT id, name FROM club_players")
            if name_key(known) == key]


def set_names(db, game, names):
    """Set the names of the game's board slots 1 and 2: a name sets it (a new player is
    made on first use), "" clears it, None leaves it. Returns the names now stored."""
    if len(names) != 2:
        raise RecordError("two names: board slot 1 and 2")
    wanted = [None if n is None else clean_name(n) for n in names]
    if db.reader().execute("SELECT 1 FROM games WHERE id=?", (game,)).fetchone() is None:
        raise RecordError("no game %s in this database" % game)
    now = time.time()
    with db.write(WRITE_BUSY_MS) as con:
        before = names_of(con, game)
        after = [before[i] if wanted[i] is None else wanted[i] for i in (0, 1)]
        if after[0] and after[1] and name_key(after[0]) == name_key(after[1]):
            raise RecordError("%s cannot play on both sides of one game: give the other "
                              "player's name" % after[0])
        for slot, name in enumerate(wanted, 1):
            if name is None or (before[slot - 1] or "") == name:
                continue
            if name == "":
                con.execute("DELETE FROM club_seats WHERE game=? AND slot=?", (game, slot))
            else:
                player = _player(con, name, now)
                con.execute("INSERT OR REPLACE INTO club_seats (game, slot, player, named) "
                            "VALUES (?,?,?,?)", (game, slot, player, now))
            con.execute("INSERT INTO club_name_log (game, slot, before, after, at) "
                        "VALUES (?,?,?,?,?)", (game, slot, before[slot - 1], name or None,
                                               now))
        return names_of(con, game)


def _player(con, name, now):
    row = con.execute("SELECT id FROM club_players WHERE fold=?", (name_key(name),)).fetchone()
    if row is not None:
        return row[0]
    return con.execute("INSERT INTO club_players (name, created, fold) VALUES (?,?,?)",
                       (name, now, name_key(name))).lastrowid


def rename_player(db, old, new):
    """Correct a player's name in every game; to a name already known: the two are one
    player from now on."""
    old, new = clean_name(old), clean_name(new)
    if not new:
        raise RecordError("the new name is empty")
    with db.write(WRITE_BUSY_MS) as con:
        row = con.execute("SELECT id, name FROM club_players WHERE fold=?",
                          (name_key(old),)).fetchone()
        if row is None:
            raise RecordError("no player called %s" % old)
        same = con.execute("SELECT id FROM club_players WHERE fold=?",
                           (name_key(new),)).fetchone()
        if same is not None and same[0] != row[0]:
            met = con.execute("SELECT a.game FROM club_seats a JOIN club_seats b "
                              "ON a.game = b.game WHERE a.player=? AND b.player=? LIMIT 1",
                              (row[0], same[0])).fetchone()
            if met is not None:
                raise RecordError("%s and %s played each other in game %d: they cannot be "
                                  "one player" % (row[1], new, met[0]))
        now = time.time()
        for game, slot in con.execute("SELECT game, slot FROM club_seats WHERE player=?",
                                      (row[0],)).fetchall():
            con.execute("INSERT INTO club_name_log (game, slot, before, after, at) "
                        "VALUES (?,?,?,?,?)", (game, slot, row[1], new, now))
        if same is None or same[0] == row[0]:
            con.execute("UPDATE club_players SET name=?, fold=? WHERE id=?",
                        (new, name_key(new), row[0]))
        else:
            con.execute("UPDATE club_seats SET player=? WHERE player=?", (same[0], row[0]))
            con.execute("DELETE FROM club_players WHERE id=?", (row[0],))


def fold_names(db):
    """Give every player its name's key (name_key) and make the key unique. A database of an
    older club app compared names by SQLite's NOCASE (ASCII letters only), so Иван and иван
    may be two rows there: they become one player, the older row kept, every seat moved."""
    con = db.writer
    columns = [row[1] for row in con.execute("PRAGMA table_info(club_players)")]
    missing = con.execute("SELECT COUNT(*) FROM club_players WHERE fold IS NULL").fetchone()[0] \
        if "fold" in columns else None
    if missing == 0:
        con.execute("CREATE UNIQUE INDEX IF NOT EXISTS club_players_by_fold ON "
                    "club_players(fold)")
        return
    with db.write() as con:
        if "fold" not in columns:
            con.execute("ALTER TABLE club_players ADD COLUMN fold TEXT")
        con.execute("DROP INDEX IF EXISTS club_players_by_fold")
        kept = {}
        for pid, name, fold in con.execute(
                "SELECT id, name, fold FROM club_players ORDER BY id").fetchall():
            key = name_key(name)
            if key not in kept:
                kept[key] = pid
                if fold != key:
                    con.execute("UPDATE club_players SET fold=? WHERE id=?", (key, pid))
                continue
            con.execute("UPDATE club_seats SET player=? WHERE player=?", (kept[key], pid))
            con.execute("DELETE FROM club_players WHERE id=?", (pid,))
        con.execute("CREATE UNIQUE INDEX club_players_by_fold ON club_players(fold)")
