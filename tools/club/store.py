"""The club app's queries over the logger's SQLite database, and the players' names.

    store = ClubStore("games.db")             # the logger's database (made when missing)
    store.current_games()                     # each board's latest game, with its names
    store.set_names(12, ["Anna", "Ben"])      # game 12: board slot 1 and 2 ("" clears one)
    store.rename_player("Ana", "Anna")        # a misspelt name corrected everywhere
    store.players()                           # every known name, for the names form
    store.player_stats()                      # per name and rules id, best first
    store.games(day="2026-11-30", table="73696d", player="Anna")
    store.game(12)                            # shots, series, chart points, names

A game is known by its key: the logger's row id of the game (the `game` of `tools.logger
export`). The logger's tables are only read; the names live in tables of their own
(`club_players`, `club_seats`, `club_name_log`), made with CREATE TABLE IF NOT EXISTS, so an
older logger still reads the database and an older database gains them on first use. The
definitions (who counts where, what an average is) are in docs/club.md.

Every statement is parametrised. Each thread gets its own connection (the web server reads
from a pool of threads while the logger writes from another); the database is in WAL mode,
so reading never waits for the logger.
"""

import datetime
import json
import sqlite3
import threading
import time
import unicodedata

from rules_core import Game, GameError
from rules_core.savedstate import settings_of
from tools.logger.frames import record_fields
from tools.logger.store import Store, replay_steps

NAME_MAX = 40
WRITE_BUSY_MS = 5000  # a name waits this long for the logger's write burst to end

SCHEMA = """
CREATE TABLE IF NOT EXISTS club_players (
    id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE COLLATE NOCASE, created REAL,
    fold TEXT);
CREATE TABLE IF NOT EXISTS club_seats (
    game INTEGER NOT NULL REFERENCES games(id),
    slot INTEGER NOT NULL CHECK (slot IN (1, 2)),
    player INTEGER NOT NULL REFERENCES club_players(id), named REAL,
    PRIMARY KEY (game, slot));
CREATE TABLE IF NOT EXISTS club_name_log (
    id INTEGER PRIMARY KEY, game INTEGER, slot INTEGER, before TEXT, after TEXT, at REAL);
CREATE TABLE IF NOT EXISTS club_game_totals (
    game INTEGER PRIMARY KEY REFERENCES games(id), final_rank INTEGER NOT NULL,
    points1 INTEGER, points2 INTEGER, innings1 INTEGER, innings2 INTEGER,
    high1 INTEGER, high2 INTEGER);
CREATE TABLE IF NOT EXISTS club_pin_tries (
    id INTEGER PRIMARY KEY CHECK (id = 1), strikes INTEGER NOT NULL, last REAL NOT NULL,
    until REAL NOT NULL);
CREATE INDEX IF NOT EXISTS club_seats_by_player ON club_seats(player);
CREATE INDEX IF NOT EXISTS club_games_by_board_rank ON games(board, final_rank);
CREATE INDEX IF NOT EXISTS club_games_by_started ON games(started, final_rank);
"""


class ClubError(ValueError):
    """A request the store refuses (a bad name, an unknown game); the text says why."""


def name_key(name):
    """What two names are compared by, everywhere (the store, the Players page, the filters,
    the statistics, `tools.logger export --player`): Unicode NFC, case folded
    (str.casefold: Иван is иван, Straße is STRASSE), NFC again. Two names with one key are
    one player; the name shown is the one first written (or renamed to)."""
    return unicodedata.normalize("NFC", unicodedata.normalize("NFC", name).casefold())


def clean_name(text):
    """A player's name as stored: Unicode NFC (é typed as e and an accent is é), spaces
    trimmed and collapsed; ClubError when it is too long or holds control characters. ""
    means no name."""
    if text is None:
        return ""
    if not isinstance(text, str):
        raise ClubError("a name is text")
    name = unicodedata.normalize("NFC", " ".join(text.split()))
    if len(name) > NAME_MAX:
        raise ClubError("a name is at most %d characters" % NAME_MAX)
    for ch in name:
        if unicodedata.category(ch)[0] == "C":
            raise ClubError("a name cannot hold control characters")
    if name[:1] in ("=", "+", "-", "@"):
        # a spreadsheet opening the CSV export would take it for a formula
        raise ClubError("a name cannot begin with =, +, - or @")
    return name


GAME_KEY_MAX = (1 << 63) - 1  # SQLite's largest row id


def game_key(text):
    """A game's key (the logger's row id) from text a person or a URL gave: plain ASCII
    digits, 1 to 2**63 - 1; ClubError otherwise (never an OverflowError further down)."""
    text = str(text).strip()
    if not text.isascii() or not text.isdigit() or len(text) > 19 or not (
            1 <= int(text) <= GAME_KEY_MAX):
        raise ClubError("a game's number is a whole number from 1 to %d, not %s"
                        % (GAME_KEY_MAX, _shown(text)))
    return int(text)


def _shown(text, limit=24):
    """``text`` quoted for a message: cut short, control characters escaped."""
    short = text[:limit] + ("..." if len(text) > limit else "")
    return repr(short)


def day_bounds(day):
    """(start, end) in seconds since the epoch of a local calendar day "YYYY-MM-DD"."""
    if isinstance(day, str):
        text = day
        try:
            if not text.isascii():
                raise ValueError
            day = datetime.date.fromisoformat(text)
        except ValueError:
            raise ClubError("a day is written YYYY-MM-DD, not %s" % _shown(text)) from None
    try:
        start = datetime.datetime.combine(day, datetime.time())
        end = start + datetime.timedelta(days=1)
        return time.mktime(start.timetuple()), time.mktime(end.timetuple())
    except (OverflowError, ValueError):
        raise ClubError("%s is past the days this clock can count (up to 9999-12-30)"
                        % day.isoformat()) from None


def names_by_game(db, games=None):
    """{game key: [name 1 or None, name 2 or None]} from a logger database's connection;
    {} when no name was ever set there (the tables are missing: an export of an older
    database). ``games``: only these keys."""
    if db.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='club_seats'"
                  ).fetchone() is None:
        return {}
    sql = ("SELECT s.game, s.slot, p.name FROM club_seats s "
           "JOIN club_players p ON p.id = s.player")
    rows = []
    if games is None:
        rows = db.execute(sql).fetchall()
    else:
        keys = list(games)
        for at in range(0, len(keys), 500):  # SQLite's limit on bound parameters
            part = keys[at:at + 500]
            rows += db.execute(sql + " WHERE s.game IN (%s)" % ",".join("?" * len(part)),
                               part).fetchall()
    out = {}
    for game, slot, name in rows:
        out.setdefault(game, [None, None])[slot - 1] = name
    return out


def replay(packed, records, refused=None):
    """The game's shots replayed from its stored records with the rules core (through
    tools.logger.store.replay_steps: a record the rules refuse is skipped, and its number
    appended to `refused`).

    Returns (shots, series, scores): shots as dicts (number, player, points, to, pins,
    carom, foul, score after it, set), series as dicts (player, set, inning, points,
    shots, first, last), scores as [(shot number, score 1, score 2)] from (0, 0, 0), the
    score as the board shows it after each shot (in ceb: of the current set)."""
    shots, series, scores = [], [], [(0, 0, 0)]
    current = None
    try:
        after = _before(Game(*settings_of(bytes(packed))))  # the game before any record
    except GameError:
        return shots, series, scores
    for _, record, game in replay_steps(packed, records, [] if refused is None else refused):
        before, inning = after
        after = _before(game)
        if game.shots == before:
            continue  # an adjust: not a shot; the score after the next shot shows it
        shooter, points, to = game.last_player, game.last_points, game.last_to
        fields = record_fields(record) or {"pins": [], "carom": 0, "foul": []}
        set_no = inning[0] + 1
        shots.append(dict(fields, number=game.shots, player=shooter, points=points, to=to,
                          score=[game.score[0], game.score[1]], set=set_no))
        scores.append((game.shots, game.score[0], game.score[1]))
        if current is None or current["key"] != inning or current["player"] != shooter:
            current = {"key": inning, "player": shooter, "set": set_no,
                       "inning": inning[2], "points": 0, "shots": 0, "first": game.shots}
            series.append(current)
        current["shots"] += 1
        current["last"] = game.shots
        if to == shooter:
            current["points"] += points
    for entry in series:
        del entry["key"]
    return shots, series, scores


def _before(game):
    """What the inning key of the next shot is made of: shots so far, (sets played, who is
    at the table, that player's innings)."""
    turn = game.turn
    return game.shots, (game.sets[0] + game.sets[1], turn, game.innings[turn - 1])


def summary(final, shots):
    """Per board slot (points, innings, high series) of a game: the points credited to the
    player (the score; in ceb summed over the sets, from the shots), the innings begun and
    the high series (ceb: the highest shot) as the board counts them."""
    out = []
    for slot in (1, 2):
        if final["rules"] == "ceb":
            points = sum(s["points"] for s in shots if s["to"] == slot)
            innings = sum(1 for s in shots if s["player"] == slot)  # ceb: a shot an inning
        else:
            points = final["score"][slot - 1]
            innings = final["innings"][slot - 1]
        out.append((points, innings, final["high"][slot - 1]))
    return out


class ClubStore:
    def __init__(self, path, create=True):
        self.path = path
        self.create = create
        self.keep = True  # keep worked-out totals in the file (see _totals)
        self._local = threading.local()
        self._all = []  # every thread's store, closed together
        self._lock = threading.Lock()
        self.store  # noqa: B018 - opened now: a bad file is refused at once, not on a page

    @property
    def store(self):
        """This thread's logger Store on the database (tools.logger.store)."""
        store = getattr(self._local, "store", None)
        if store is None:
            with self._lock:
                first = not self._all
            # the first connection makes what is missing; the others only check the file
            store = Store(self.path, create=self.create and first)
            store.db.execute("PRAGMA busy_timeout=%d" % WRITE_BUSY_MS)
            if first:
                _setup(store.db)
            self._local.store = store
            with self._lock:
                self._all.append(store)
        return store

    @property
    def db(self):
        return self.store.db

    def close(self):
        with self._lock:
            for store in self._all:
                store.close()
            self._all = []
        self._local = threading.local()

    # -- names ------------------------------------------------------------------------------

    def names(self, game):
        return names_by_game(self.db, [game]).get(game, [None, None])

    def set_names(self, game, names):
        """Set the names of the game's board slots 1 and 2: a name sets it (a new player is
        made on first use), "" clears it, None leaves it. Returns the names now stored."""
        if len(names) != 2:
            raise ClubError("two names: board slot 1 and 2")
        wanted = [None if n is None else clean_name(n) for n in names]
        db = self.db
        if db.execute("SELECT 1 FROM games WHERE id=?", (game,)).fetchone() is None:
            raise ClubError("no game %s in this database" % game)
        now = time.time()
        db.execute("BEGIN IMMEDIATE")
        try:
            before = names_by_game(db, [game]).get(game, [None, None])
            after = [before[i] if wanted[i] is None else wanted[i] for i in (0, 1)]
            if after[0] and after[1] and name_key(after[0]) == name_key(after[1]):
                raise ClubError("%s cannot play on both sides of one game: give the other "
                                "player's name" % after[0])
            for slot, name in enumerate(wanted, 1):
                if name is None or (before[slot - 1] or "") == name:
                    continue
                if name == "":
                    db.execute("DELETE FROM club_seats WHERE game=? AND slot=?", (game, slot))
                else:
                    player = self._player(name, now)
                    db.execute("INSERT OR REPLACE INTO club_seats (game, slot, player, named) "
                               "VALUES (?,?,?,?)", (game, slot, player, now))
                db.execute("INSERT INTO club_name_log (game, slot, before, after, at) "
                           "VALUES (?,?,?,?,?)", (game, slot, before[slot - 1], name or None,
                                                  now))
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")
        return self.names(game)

    def _player(self, name, now):
        row = self.db.execute("SELECT id FROM club_players WHERE fold=?",
                              (name_key(name),)).fetchone()
        if row is not None:
            return row[0]
        return self.db.execute("INSERT INTO club_players (name, created, fold) VALUES (?,?,?)",
                               (name, now, name_key(name))).lastrowid

    def rename_player(self, old, new):
        """Correct a player's name in every game; to a name already known: the two are one
        player from now on."""
        old, new = clean_name(old), clean_name(new)
        if not new:
            raise ClubError("the new name is empty")
        db = self.db
        db.execute("BEGIN IMMEDIATE")
        try:
            row = db.execute("SELECT id, name FROM club_players WHERE fold=?",
                             (name_key(old),)).fetchone()
            if row is None:
                raise ClubError("no player called %s" % old)
            same = db.execute("SELECT id FROM club_players WHERE fold=?",
                              (name_key(new),)).fetchone()
            if same is not None and same[0] != row[0]:
                met = db.execute("SELECT a.game FROM club_seats a JOIN club_seats b "
                                 "ON a.game = b.game WHERE a.player=? AND b.player=? LIMIT 1",
                                 (row[0], same[0])).fetchone()
                if met is not None:
                    raise ClubError("%s and %s played each other in game %d: they cannot be "
                                    "one player" % (row[1], new, met[0]))
            now = time.time()
            for game, slot in db.execute("SELECT game, slot FROM club_seats WHERE player=?",
                                         (row[0],)).fetchall():
                db.execute("INSERT INTO club_name_log (game, slot, before, after, at) "
                           "VALUES (?,?,?,?,?)", (game, slot, row[1], new, now))
            if same is None or same[0] == row[0]:
                db.execute("UPDATE club_players SET name=?, fold=? WHERE id=?",
                           (new, name_key(new), row[0]))
            else:
                db.execute("UPDATE club_seats SET player=? WHERE player=?", (same[0], row[0]))
                db.execute("DELETE FROM club_players WHERE id=?", (row[0],))
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")

    def players(self):
        """Every known name, A to Z (the names form offers them); one a player."""
        seen = {}
        for (name,) in self.db.execute("SELECT name FROM club_players ORDER BY id"):
            seen.setdefault(name_key(name), name)
        return [seen[key] for key in sorted(seen)]

    def _player_ids(self, name):
        """The rows of every player whose name has ``name``'s key (one, once the file was
        set up by this version; a database an older club app wrote may hold more)."""
        key = name_key(clean_name(name))
        return [pid for pid, known in self.db.execute("SELECT id, name FROM club_players")
                if name_key(known) == key]

    # -- the PIN's lockout ------------------------------------------------------------------

    def pin_tries(self):
        """(strikes, last, until) of the wrong PINs of every client together (security.
        PinLimiter), as last kept; None when none was ever kept."""
        row = self.db.execute("SELECT strikes, last, until FROM club_pin_tries WHERE id=1"
                              ).fetchone()
        return None if row is None else tuple(row)

    def keep_pin_tries(self, strikes, last, until):
        try:
            self.db.execute("INSERT OR REPLACE INTO club_pin_tries VALUES (1, ?, ?, ?)",
                            (strikes, last, until))
        except sqlite3.OperationalError:
            pass  # the logger held the file past the busy time: kept with the next one

    # -- the live tables --------------------------------------------------------------------

    def current_games(self):
        """Each board's latest game (the one whose state the board sent last, in the board's
        own order): dicts with board (its id), game (key), game_no, state (the board-state
        JSON text as the logger stored it), names, updated, last_seen; by board id."""
        rows = self.db.execute(
            "SELECT b.key, g.id, g.game_no, g.final, g.updated, b.last_seen FROM boards b "
            "JOIN games g ON g.id = (SELECT id FROM games WHERE board=b.id AND final IS NOT "
            "NULL ORDER BY final_rank DESC LIMIT 1) ORDER BY b.key").fetchall()
        names = names_by_game(self.db, [r[1] for r in rows])
        return [{"board": key, "game": game, "game_no": game_no, "state": final,
                 "names": names.get(game, [None, None]), "updated": updated,
                 "last_seen": seen}
                for key, game, game_no, final, updated, seen in rows]

    # -- results ----------------------------------------------------------------------------

    def games(self, day=None, table=None, player=None, limit=None):
        """Games with a stored state, newest first: dicts with game (key), board, game_no,
        started, updated, final (the board state, a dict), names. ``day``: "YYYY-MM-DD"
        (local time, by when the game began); ``table``: a board id; ``player``: a name."""
        sql = ["SELECT g.id, b.key, g.game_no, g.started, g.updated, g.final FROM games g "
               "JOIN boards b ON b.id = g.board"]
        where, args = ["g.final IS NOT NULL"], []
        if day:
            start, end = day_bounds(day)
            where.append("g.started >= ? AND g.started < ?")
            args += [start, end]
        if table:
            where.append("b.key = ?")
            args.append(table)
        if player:
            ids = self._player_ids(player)[:500]
            where.append("g.id IN (SELECT game FROM club_seats WHERE player IN (%s))"
                         % ",".join("?" * len(ids)))
            args += ids
        sql.append("WHERE " + " AND ".join(where))
        sql.append("ORDER BY g.started DESC, g.id DESC")
        if limit is not None:
            sql.append("LIMIT ?")
            args.append(int(limit))
        rows = self.db.execute(" ".join(sql), args).fetchall()
        names = names_by_game(self.db, [r[0] for r in rows])
        return [{"game": game, "board": key, "game_no": no, "started": started,
                 "updated": updated, "final": json.loads(final),
                 "names": names.get(game, [None, None])}
                for game, key, no, started, updated, final in rows]

    # The logger sets a game's final_rank with its final state: "final_rank IS NOT NULL" is
    # "has a state", and the counts below read the indexes alone.

    def days(self):
        """[(day "YYYY-MM-DD", games)] with games, newest first (local time)."""
        return self.db.execute(
            "SELECT date(started, 'unixepoch', 'localtime') AS d, COUNT(*) FROM games "
            "WHERE final_rank IS NOT NULL GROUP BY d ORDER BY d DESC").fetchall()

    def tables(self):
        """[(board id, games)] by board id."""
        return self.db.execute(
            "SELECT b.key, COUNT(g.id) FROM boards b JOIN games g ON g.board = b.id "
            "WHERE g.final_rank IS NOT NULL GROUP BY b.id ORDER BY b.key").fetchall()

    def game(self, game):
        """One game: the games() fields plus game_id, complete, shots, series and scores
        (see replay()); None when there is no such game (or no state of it yet)."""
        row = self.db.execute(
            "SELECT g.id, b.key, g.game_no, g.started, g.updated, g.final, g.game_id, "
            "g.complete, g.packed FROM games g JOIN boards b ON b.id = g.board "
            "WHERE g.id=? AND g.final IS NOT NULL", (game,)).fetchone()
        if row is None:
            return None
        key, board, no, started, updated, final, game_id, complete, packed = row
        refused = []  # stored records the rules refuse: left out (docs/protocol.md)
        shots, series, scores = replay(packed, self.store.history(key), refused)
        final = json.loads(final)
        return {"game": key, "board": board, "game_no": no, "started": started,
                "updated": updated, "final": final, "game_id": game_id,
                "complete": bool(complete) and not refused, "names": self.names(key),
                "shots": shots, "series": series, "scores": scores,
                "replayed": len(shots) == final["shots"] and not refused,
                "refused": refused, "disputed": self.store.disputed(key)}

    # -- players ----------------------------------------------------------------------------

    @classmethod
    def reading(cls, store):
        """A ClubStore over an open logger Store that changes nothing in the file (the
        logger's `stats` command): no tables made, no totals kept."""
        club = cls.__new__(cls)
        club.path, club.create, club.keep = store.path, False, False
        club._local = threading.local()
        club._local.store = store
        club._all, club._lock = [], threading.Lock()
        return club

    def player_stats(self):
        """Per player name and rules id: games, won, points, innings, average (points per
        inning) and high series, over finished games where the name was set; best first
        (by rules id, then average, then games won)."""
        db = self.db
        # games whose kept totals are missing or older than their final state
        stale = [row[0] for row in db.execute(
            "SELECT DISTINCT g.id FROM club_seats s JOIN games g ON g.id = s.game "
            "LEFT JOIN club_game_totals t ON t.game = g.id WHERE g.status = 'finished' "
            "AND (t.final_rank IS NULL OR t.final_rank != g.final_rank)")]
        # {} once kept (the sums below count them); else what was worked out now
        totals = self._totals(stale) if stale else {}
        table = {}

        def add(name, rules, games, won, points, innings, high):
            entry = table.setdefault((name_key(name), rules), {
                "name": name, "rules": rules, "games": 0, "won": 0, "points": 0,
                "innings": 0, "high": 0})
            entry["games"] += games
            entry["won"] += won
            entry["points"] += points
            entry["innings"] += innings
            entry["high"] = max(entry["high"], high)

        for row in db.execute(
                "SELECT p.name, g.rules, COUNT(*), SUM(g.winner = CAST(s.slot AS TEXT)), "
                "SUM(CASE s.slot WHEN 1 THEN t.points1 ELSE t.points2 END), "
                "SUM(CASE s.slot WHEN 1 THEN t.innings1 ELSE t.innings2 END), "
                "MAX(CASE s.slot WHEN 1 THEN t.high1 ELSE t.high2 END) "
                "FROM club_seats s JOIN club_players p ON p.id = s.player "
                "JOIN games g ON g.id = s.game JOIN club_game_totals t ON t.game = g.id "
                "AND t.final_rank = g.final_rank WHERE g.status = 'finished' "
                "GROUP BY p.id, g.rules"):
            add(*row)
        # totals worked out now but not kept (reading only, or the logger held the file)
        for game, (p1, p2, i1, i2, h1, h2) in totals.items():
            for slot, name, rules, winner in db.execute(
                    "SELECT s.slot, p.name, g.rules, g.winner FROM club_seats s "
                    "JOIN club_players p ON p.id = s.player JOIN games g ON g.id = s.game "
                    "WHERE s.game = ?", (game,)):
                first = slot == 1
                add(name, rules, 1, int(winner == str(slot)), p1 if first else p2,
                    i1 if first else i2, h1 if first else h2)
        out = list(table.values())
        for entry in out:
            entry["average"] = (round(entry["points"] / entry["innings"], 3)
                                if entry["innings"] else 0.0)
        out.sort(key=lambda e: (e["rules"], -e["average"], -e["won"], name_key(e["name"])))
        return out

    def _totals(self, games):
        """Work out each game's (points 1, 2, innings 1, 2, high 1, 2) from the stored game
        (ceb: its shots replayed) and keep them in club_game_totals, with the final state's
        rank they belong to (a later state makes them be worked out again). Returns {} once
        kept; {game: totals} when they could not be kept (reading only, or busy)."""
        out, keep = {}, []
        db = self.db
        for game in games:
            final, packed, rank = db.execute(
                "SELECT final, packed, final_rank FROM games WHERE id=?", (game,)).fetchone()
            final = json.loads(final)
            shots = []
            if final["rules"] == "ceb":  # the score is the last set's: add up the shots
                shots = replay(packed, self.store.history(game))[0]
            (p1, i1, h1), (p2, i2, h2) = summary(final, shots)
            out[game] = (p1, p2, i1, i2, h1, h2)
            keep.append((game, rank, p1, p2, i1, i2, h1, h2))
        if not self.keep:
            return out
        try:
            db.execute("BEGIN IMMEDIATE")
            db.executemany("INSERT OR REPLACE INTO club_game_totals VALUES (?,?,?,?,?,?,?,?)",
                           keep)
            db.execute("COMMIT")
        except sqlite3.OperationalError:
            if db.in_transaction:
                db.execute("ROLLBACK")  # the logger holds the file: kept next time instead
            return out
        return {}

    # -- exports ----------------------------------------------------------------------------

    def export_lines(self, game=None, fmt="json", day=None, table=None, player=None):
        """The lines of `tools.logger export` (the same bytes, names included)."""
        from tools.logger import report

        return report.export_lines(self.store, game, fmt, day, table, player)


def _setup(db):
    deadline = time.monotonic() + 30
    while True:
        try:
            db.executescript(SCHEMA)
            _fold_names(db)
            return
        except sqlite3.OperationalError as e:
            if "locked" not in str(e) and "busy" not in str(e) or time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def _fold_names(db):
    """Give every player its name's key (name_key) and make the key unique. A database of an
    older club app compared names by SQLite's NOCASE (ASCII letters only), so Иван and иван
    may be two rows there: they become one player, the older row kept, every seat moved."""
    columns = [row[1] for row in db.execute("PRAGMA table_info(club_players)")]
    missing = db.execute("SELECT COUNT(*) FROM club_players WHERE fold IS NULL").fetchone()[0] \
        if "fold" in columns else None
    if missing == 0:
        db.execute("CREATE UNIQUE INDEX IF NOT EXISTS club_players_by_fold ON "
                   "club_players(fold)")
        return
    db.execute("BEGIN IMMEDIATE")
    try:
        if "fold" not in columns:
            db.execute("ALTER TABLE club_players ADD COLUMN fold TEXT")
        db.execute("DROP INDEX IF EXISTS club_players_by_fold")
        kept = {}
        for pid, name, fold in db.execute(
                "SELECT id, name, fold FROM club_players ORDER BY id").fetchall():
            key = name_key(name)
            if key not in kept:
                kept[key] = pid
                if fold != key:
                    db.execute("UPDATE club_players SET fold=? WHERE id=?", (key, pid))
                continue
            db.execute("UPDATE club_seats SET player=? WHERE player=?", (kept[key], pid))
            db.execute("DELETE FROM club_players WHERE id=?", (pid,))
        db.execute("CREATE UNIQUE INDEX club_players_by_fold ON club_players(fold)")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")
