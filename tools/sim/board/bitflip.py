"""The bit-flip experiment: what one flipped bit on flash does to a stored game.

    micropython tools/sim/board/bitflip.py FLIPS [EVENTS] [SEED] [-v]

Plays a game of EVENTS events (shots, fouls, adjusts and undos, `maintain()` between them
as the application does) through `boardlib.journal.GameStore` onto littlefs over the
simulated board's flash (384 blocks of 4 KB, with a board configuration beside the game).
Then, FLIPS times, it flips one bit at a random place in the used area of that image
(every block up to its last programmed byte; erased space is left alone), mounts a copy
and resumes the game with `journal_load.load()`, as the board does at boot. Each resume is
one of:

- `whole`           the game as it was stored
- `lost_last`       the game without its last event: what littlefs gives when it drops a
                    damaged last commit, and what a power cut during that write gives
- `lost_more_err`   an older or different game, and `load()` said so (the board shows Err)
- `lost_silent`     an older or different game, and `load()` said nothing was wrong
- `vanished_err`    no game, and `load()` said files were there (Err 42)
- `vanished_silent` no game, and `load()` said nothing was stored
- `unmountable`     littlefs refused to mount the image
- `raised`          `load()` raised

Prints `key value` lines: the counts, `flips`, `events`, and `silent_losses` (lost more
than the last event, or vanished, without an error: `lost_silent + vanished_silent +
unmountable`; on the ESP32 an unmountable filesystem is formatted at boot and the game is
gone without a word). `-v` adds one line per flip: block, offset, bit, class, status.
The same seed gives the same flips.
"""

import os
import sys

from boardlib import journal_load
from boardlib.crc32 import crc32
from boardlib.journal import UNDO_RECORD, GameStore
from rules_core import Game, GameError
from rules_core import events as ev
from rules_core.settings import SETS, with_trait
from tools.sim.board.flash import RamBlockDev, mount

BLOCK_SIZE = 4096
BLOCKS = 384
MOUNT = "/bitflip"
DATA_DIR = MOUNT + "/game"
CLASSES = ("whole", "lost_last", "lost_more_err", "lost_silent", "vanished_err",
           "vanished_silent", "unmountable", "raised")


class Rng:
    """A small seeded generator: the same numbers on every interpreter."""

    def __init__(self, seed):
        self.x = seed & 0x7FFFFFFF

    def below(self, n):
        self.x = (self.x * 1103515245 + 12345) & 0x7FFFFFFF
        return (self.x >> 4) % n


def new_game():
    # a match in sets: its snapshot holds the most (the sets' scores and checkpoints)
    return Game(with_trait(SETS)[0], distance=(150, 150), sets=3, first=1)


def key(game):
    if game is None:
        return None
    return crc32(game.state_json().encode() + b"|" + game.history.tobytes())


def play(store, events, rng):
    """Play `events` events onto `store`; returns the key after new_game and each event."""
    game = new_game()
    store.new_game(game)
    keys = [key(game)]
    fouls = ("foul", "quilles", "rouge")
    while len(keys) <= events:
        roll = rng.below(100)
        if game.finished or (roll < 7 and game.history.count):
            record = UNDO_RECORD
        elif roll < 10:
            record = ev.encode_adjust(1 + rng.below(2), (2, -2, 4)[rng.below(3)])
        else:
            pins = (0, 0, 1, 4, 5, 16, 31, 10)[rng.below(8)]
            foul = () if rng.below(10) else (fouls[rng.below(3)],)
            record = ev.encode_shot(pins, rng.below(3), foul)
        try:
            if record == UNDO_RECORD:
                game.undo()
            else:
                game.apply(record)
        except GameError:
            continue
        store.record(game, record)
        store.maintain()
        keys.append(key(game))
    store.close()
    return keys


def stored_image(events, seed):
    dev = RamBlockDev(BLOCK_SIZE, BLOCKS)
    mount(dev, MOUNT)
    with open(MOUNT + "/board.cfg", "w") as f:  # the board keeps its configuration there
        f.write('PBC1 00000000\n{"display": "tm1637"}')
    keys = play(journal_load.store(DATA_DIR), events, Rng(seed))
    os.umount(MOUNT)
    return dev.data, keys


def used_area(image):
    """[(block, used length)] for every block with something programmed in it."""
    used = []
    for block in range(BLOCKS):
        start = block * BLOCK_SIZE
        end = start + BLOCK_SIZE
        while end > start and image[end - 1] == 0xFF:
            end -= 1
        if end > start:
            used.append((block, end - start))
    return used


def pick(used, rng):
    total = 0
    for _, length in used:
        total += length
    at = rng.below(total)
    for block, length in used:
        if at < length:
            return block, at
        at -= length
    raise ValueError("no used area")


def resume(image):
    """(class name, load status) for one damaged image."""
    dev = RamBlockDev(BLOCK_SIZE, BLOCKS, image=image)
    try:
        mount(dev, MOUNT, format_blank=False)
    except OSError:
        return "unmountable", -1
    try:
        store = GameStore(DATA_DIR)
        try:
            game, status = journal_load.load(store)
        except Exception:  # the experiment counts it; the board would reset
            return "raised", -1
        store.close()
        return game, status
    finally:
        os.umount(MOUNT)


def classify(game, status, keys):
    if game is None:
        return "vanished_silent" if status == GameStore.NONE else "vanished_err"
    got = key(game)
    if got == keys[-1]:
        return "whole"
    if got == keys[-2]:
        return "lost_last"
    return "lost_silent" if status == GameStore.OK else "lost_more_err"


def run(flips, events=150, seed=1, verbose=False):
    image, keys = stored_image(events, seed)
    used = used_area(image)
    rng = Rng(seed * 7919 + 17)
    counts = {}
    for name in CLASSES:
        counts[name] = 0
    work = bytearray(image)
    for _ in range(flips):
        block, offset = pick(used, rng)
        bit = rng.below(8)
        at = block * BLOCK_SIZE + offset
        work[at] ^= 1 << bit
        game, status = resume(work)
        work[at] ^= 1 << bit
        name = game if isinstance(game, str) else classify(game, status, keys)
        counts[name] += 1
        if verbose:
            print("flip", block, offset, bit, name, status)
    counts["flips"] = flips
    counts["events"] = events
    counts["used_bytes"] = sum(length for _, length in used)
    counts["silent_losses"] = (counts["lost_silent"] + counts["vanished_silent"]
                               + counts["unmountable"])
    return counts


def main(argv):
    verbose = "-v" in argv
    args = [a for a in argv if a != "-v"]
    if not args:
        print("usage: bitflip.py FLIPS [EVENTS] [SEED] [-v]")
        return 2
    flips = int(args[0])
    events = int(args[1]) if len(args) > 1 else 150
    seed = int(args[2]) if len(args) > 2 else 1
    counts = run(flips, events, seed, verbose)
    for name in CLASSES + ("flips", "events", "used_bytes", "silent_losses"):
        print(name, counts[name])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
