"""Games played at random but by the rules, for tests and the first-load bench.

    game, steps = play(random.Random(1), "ddbu", distance=(40, 40))
    # steps: ("shot", record) and ("undo", None) in the order the players made them
    fill(Store("big.db"), 10000, tables=16, seed=1)   # a season of a club, stored
                                                      # (a tools.logger.store.Store)

`fill` stores through the logger's own Store functions what a board sends while a game
is played (every shot, undo and board state), so that the database looks like one the
logger wrote over months: games spread over a season's evenings, eight tables, a dozen
players named at the tables (most games named, some not).
"""

import random
import time
import zlib

from rules_core import Game
from rules_core.snapshot import pack_state, unpack_state

PLAYERS = ("Anna", "Ben", "Carla", "Dieter", "Elif", "Frank", "Greta", "Hans", "Ines",
           "Jonas", "Katrin", "Lars")
SETTINGS = (("ddbu", (40, 40), 1), ("ddbu", (60, 50), 1), ("russian", (60, 60), 1),
            ("ceb", (40, 40), 3), ("ceb", (60, 60), 1))


def play(rng, rules, distance=(40, 40), sets=1, first=1, finish=True, length=400):
    """A game played shot by shot: (Game, steps). Unfinished when ``finish`` is False (it
    stops after a random number of shots)."""
    game = Game(rules, distance, sets, first)
    steps = []
    stop = length if finish else rng.randrange(1, 30)
    while not game.finished and len(steps) < stop:
        if game.shots and rng.random() < 0.03:
            game.undo()
            steps.append(("undo", None))
            continue
        pins = sum(1 << s for s in range(5) if rng.random() < 0.2)
        carom = 1 if rng.random() < 0.2 else 0
        fouls = ("foul",) if rng.random() < 0.06 else ()
        steps.append(("shot", game.shot(pins=pins, carom=carom, fouls=fouls)))
    return game, steps


def state_fields(game):
    """A STATE frame's fields as tools.logger.frames.parse gives them."""
    history = game.history.tobytes()
    packed = pack_state(game)
    return {"state": unpack_state(packed), "packed": packed, "history": len(history) // 4,
            "history_crc": zlib.crc32(history) if history else 0}


def store_game(store, board, boot, game_no, game_id, rng, settings, stamp, every_state=True):
    """Play one game into ``store`` (a tools.logger Store, inside a transaction) as the
    board's frames would bring it; returns (game row, next stamp, Game)."""
    rules, distance, sets = settings
    game = Game(rules, distance, sets, rng.choice((1, 2)))
    replay_of, steps = play(rng, rules, distance, sets, game.first,
                            finish=rng.random() < 0.97)
    row = store.game(board, {"game_id": game_id, "game": game_no})
    store.state(row, state_fields(game), boot << 32 | stamp)
    stamp += 1
    for kind, record in steps:
        if kind == "undo":
            game.undo()
            store.undo(row, {"history": len(game.history) // 4}, boot << 32 | stamp)
        else:
            game.apply(record)
            last = game.state()["last"]
            store.event(row, {"index": len(game.history) // 4, "record": record,
                              "player": last["player"], "points": last["points"],
                              "to": last["to"], "resent": False}, boot << 32 | stamp)
        stamp += 1
        if every_state or kind == "undo":
            store.state(row, state_fields(game), boot << 32 | stamp)
            stamp += 1
    store.state(row, state_fields(game), boot << 32 | stamp)
    store.check_history(row)
    return row, stamp + 1, game


def fill(store, count, tables=8, seed=1, days=180, named=0.9, every_state=True):
    """Store ``count`` games on ``tables`` boards over the last ``days`` evenings and name
    most of them (``named`` of them) with the club's players. Returns the game rows."""
    from tools.records import Records

    rng = random.Random(seed)
    now = time.time()
    rows = []
    with store.transaction():
        boards = [store.board("c1ab%04x" % t, "mqtt") for t in range(tables)]
        boots = [store.boot(b, "%08x" % rng.randrange(1 << 32))[0] for b in boards]
    stamps = [0] * tables
    per_evening = max(1, count // days)
    games_no = [0] * tables
    for start in range(0, count, 200):
        with store.transaction():
            for n in range(start, min(count, start + 200)):
                t = n % tables
                games_no[t] += 1
                row, stamps[t], _ = store_game(
                    store, boards[t], boots[t], games_no[t], "%016x" % rng.randrange(1 << 64),
                    rng, rng.choice(SETTINGS), stamps[t], every_state)
                evening = days - 1 - n // per_evening
                began = now - evening * 86400 - rng.randrange(3600, 4 * 3600)
                # the logger stamps a game with the host's clock when it first sees it;
                # a season made now is given the evenings it would have been played on
                store.db.execute("UPDATE games SET started=?, updated=? WHERE id=?",
                                 (began, began + 1800, row))
                rows.append(row)
    club = Records.open(store.database)
    named_rows = [row for row in rows if rng.random() < named]
    for row in named_rows:
        pair = rng.sample(PLAYERS, 2)
        club.set_names(row, pair)
    club.player_stats()  # as the Players page has been opened: each game's totals kept
    return rows
