"""A stored game's events through the rules core: the one replay every reader uses.

    held = held_records(con, game)             # the board's records, undos applied
    for number, record, g in replay_steps(packed, records, refused): ...
    replay = Replay.of(packed, records)        # shots, series, chart points, refused
    proven_by(packed, count, crc, records, refused, replay.game)   # exactly the claim?

A game's events are stored as the board sent them (events and undos in the board's
order, a resent event at its place); `held_records` turns those rows into the list of
records the board holds. `replay_steps` plays records through rules_core.Game from the
settings a stored state names: a record the rules refuse is skipped and its number noted,
a record not held (None) ends the replay, so no stored record can make a page, an export
or a statistic fail. `Replay` is what the pages, the exports and the statistics read: the
shots (each with its pins, carom, fouls, the score after it and its set), the series and
the chart's points; `proven_by` says whether the records are exactly those a board state
counts and replay to its very bytes (what `complete` means).
"""

import zlib

from rules_core import Game, GameError, events
from rules_core.savedstate import settings_of
from rules_core.snapshot import pack_state


def held_records(con, game, after=None, held=None):
    """Every record stored for ``game`` in the board's order, undos applied: a list with
    None where an event is not held. ``after`` (a rank) with ``held``: carry ``held`` on
    with the rows ranked after it."""
    sql = "SELECT kind, number, record, resent FROM events WHERE game=?"
    args = (game,)
    if after is not None:
        sql += " AND rank > ?"
        args = (game, after)
    return apply_rows([] if held is None else held,
                      con.execute(sql + " ORDER BY rank", args).fetchall())


def apply_rows(held, rows):
    """Events rows (kind, number, record, resent), in rank order, applied to `held`
    (changed)."""
    for kind, number, record, resent in rows:
        # The board's own order: an event played at `number` replaces what stood there
        # and ends the list; an undo ends the list at `number`. An event sent again on
        # request is the board's record at that place and says nothing of what follows:
        # it fills its place only (the state's CRC shows whether the rest still holds).
        if kind == "undo":
            del held[number:]
            continue
        while len(held) < number - 1:
            held.append(None)
        if len(held) >= number and held[number - 1] == bytes(record):
            continue  # the same event again (a resend): nothing after it changes
        if resent and len(held) >= number:
            held[number - 1] = bytes(record)
            continue
        del held[number - 1:]
        held.append(bytes(record))
    return held


def replay_steps(packed, records, refused):
    """The stored records of a game through the rules core, from the settings its state
    `packed` names: yields (number, record, game) after each record the rules take (the
    game is one object, changed in place), 1 = first. A record the rules refuse is
    skipped, and its number appended to `refused`; a record not held (None) ends it: the
    rest cannot be replayed without it."""
    try:
        game = Game(*settings_of(bytes(packed)))
    except GameError:
        return
    for number, record in enumerate(records, 1):
        if record is None:
            return
        try:
            game.apply(record)
        except GameError:
            refused.append(number)
            continue
        yield number, record, game


def replay_all(packed, records, refused):
    """The game replay_steps() ends with (None when `packed` names no settings)."""
    try:
        replayed = Game(*settings_of(bytes(packed)))
    except GameError:
        return None
    for _, _, replayed in replay_steps(packed, records, refused):  # noqa: B007
        pass
    return replayed


def proven_by(packed, count, crc, records, refused, replayed):
    """True when `records` (as held, in order) are exactly the `count` records a state
    counts, with its CRC-32, the rules refused none (`refused`), and `replayed` (the game
    replay_steps() ended with; None if it yielded nothing) is that state, byte for byte."""
    if packed is None or None in records or refused or len(records) != count:
        return False
    joined = b"".join(records)
    if (zlib.crc32(joined) if joined else 0) != crc:
        return False
    replayed = replayed or replay_all(packed, [], [])
    return replayed is not None and pack_state(replayed) == bytes(packed)


def record_fields(record):
    """What a shot record says, for people: pins (spot numbers), carom, foul names (every
    foul, a repeated one as often as it was given), and `unset`: the shot began before
    the pins were all set (the board's castle check, docs/inputs.md); None for an adjust
    record."""
    kind, pins, carom, fouls = events.decode(record)
    if kind != events.KIND_SHOT:
        return None
    bits, other = fouls
    names = [name for i, name in enumerate(events.FOUL_NAMES) if bits >> i & 1]
    return {"pins": pins_list(pins), "carom": carom, "foul": names + ["foul"] * other,
            "unset": events.is_unset(record)}


def pins_list(mask):
    return [spot + 1 for spot in range(5) if mask >> spot & 1]


class Replay:
    """A game's stored records replayed once (replay_steps).

    shots: dicts (number, player, points, to, pins, carom, foul, score after it, set,
    set_score, member); series: dicts (player, set, inning, points, shots, first, last);
    sets: one dict a set that was decided (set, score, winner): the points that won it,
    before the board's score went back to 0 : 0 for the next set; scores: [(shot number,
    score 1, score 2)] from (0, 0, 0), the score after each shot as the board shows it (in
    a match of sets: of the current set), and where a shot won a set that the match goes
    on after, the set's points at that shot first, then (shot number, 0, 0); refused:
    numbers of the records the rules refuse (left out); game: the Game it ended with (the
    settings' new game when no record was applied; None when the stored state names no
    settings).

    A shot's ``set_score`` is the set's points when the shot decided a set (None
    otherwise); ``member`` is the shooter's player at the table in a team match (CEB 28:
    1 or 2; None in singles)."""

    def __init__(self):
        self.shots, self.series, self.scores = [], [], [(0, 0, 0)]
        self.sets = []
        self.refused = []
        self.game = None

    @classmethod
    def of(cls, packed, records):
        out = cls()
        if packed is None:
            return out
        try:
            out.game = Game(*settings_of(bytes(packed)))  # until a record is applied
        except GameError:
            return out
        after = _before(out.game)
        current = None
        for _, record, game in replay_steps(packed, records, out.refused):
            out.game = game
            before, inning, sets_before, member = after
            after = _before(game)
            if game.shots == before:
                continue  # an adjust: not a shot; the score after the next shot shows it
            shooter, points, to = game.last_player, game.last_points, game.last_to
            fields = record_fields(record) or {"pins": [], "carom": 0, "foul": [],
                                               "unset": False}
            set_no = inning[0] + 1
            set_score = None
            if game.sets[0] + game.sets[1] > inning[0]:  # this shot decided the set
                _, was1, was2 = out.scores[-1]
                set_score = [was1 + (points if to == 1 else 0),
                             was2 + (points if to == 2 else 0)]
                winner = 1 if game.sets[0] > sets_before[0] else 2
                out.sets.append({"set": set_no, "score": set_score, "winner": winner})
            out.shots.append(dict(fields, number=game.shots, player=shooter, points=points,
                                  to=to, score=[game.score[0], game.score[1]], set=set_no,
                                  set_score=set_score, member=member))
            if set_score is not None and not game.finished:
                out.scores.append((game.shots, set_score[0], set_score[1]))
            out.scores.append((game.shots, game.score[0], game.score[1]))
            if current is None or current["key"] != inning or current["player"] != shooter:
                current = {"key": inning, "player": shooter, "set": set_no,
                           "inning": inning[2], "points": 0, "shots": 0,
                           "first": game.shots}
                out.series.append(current)
            current["shots"] += 1
            current["last"] = game.shots
            if to == shooter:
                current["points"] += points
        for entry in out.series:
            del entry["key"]
        return out


def _before(game):
    """What the next shot is measured against: shots so far, its inning key (sets played,
    who is at the table, that player's innings), the sets won, and the shooter's member at
    the table in a team match (CEB 28; None in singles)."""
    turn = game.turn
    member = game.members[turn - 1] if game.teams else None
    return (game.shots, (game.sets[0] + game.sets[1], turn, game.innings[turn - 1]),
            (game.sets[0], game.sets[1]), member)
