"""boardlib.journal cases: games come back whole, bad data costs only the damaged part.

Run by tests/test_journal.py on CPython over the host's files and on the MicroPython unix
port over littlefs (a fresh RAM flash for each case), all cases in one process. Every
expected state comes from rules_core.Game playing the same events in memory.
"""

import os

from boardlib import journal, journal_load
from boardlib.crc32 import crc32
from boardlib.journal import UNDO_RECORD, GameStore
from device.support import Rng, check, micropython_only, read, scratch_dir, write
from rules_core import Game, GameError
from rules_core import events as ev

HEAPSIZE = "4M"

# load()'s statuses, as the store's class names them
OK, NONE, TRUNCATED, CORRUPT = GameStore.OK, GameStore.NONE, GameStore.TRUNCATED, GameStore.CORRUPT

_RULES = {"ddbu": ((120, 100), 1, ("foul",)), "ceb": ((60, 60), 3, ("foul", "quilles", "rouge")),
          "russian": ((71, 71), 1, ("foul", "stop30")),
          "long": ((2000, 2000), 1, ("foul",))}  # ddbu: hundreds of events, chunks of them


def new(rules):
    distance, sets, _ = _RULES[rules]
    return Game("ddbu" if rules == "long" else rules, distance=distance, sets=sets, first=1)


def step(game, rec):
    if rec == UNDO_RECORD:
        game.undo()
    else:
        game.apply(rec)


def make_events(rules, count, seed):
    # a game's worth of events the rules accept: shots, fouls, adjusts and undos
    rng = Rng(seed)
    game = new(rules)
    fouls = _RULES[rules][2]
    out = []
    while len(out) < count:
        roll = rng.below(100)
        if game.finished or (roll < 8 and len(game.history)):
            rec = UNDO_RECORD
        elif roll < 12:
            rec = ev.encode_adjust(1 + rng.below(2), (2, -2, 4)[rng.below(3)])
        else:
            pins = (0, 0, 1, 4, 5, 16, 31, 2)[rng.below(8)]
            carom = rng.below(3) if rules == "ceb" else rng.below(5) // 4
            foul = () if rng.below(10) else (fouls[rng.below(len(fouls))],)
            rec = ev.encode_shot(pins, carom, foul)
        try:
            step(game, rec)
        except GameError:
            continue
        out.append(rec)
    return out


def same(a, b):
    return a is not None and b is not None and a.state_json() == b.state_json() and \
        a.history.tobytes() == b.history.tobytes()


COPIES = ("a", "b")  # the store's two copies, each in a folder of its own


def wipe(root):
    # every file; the copies' directories stay (as on a board, where they are made once)
    for name in os.listdir(root):
        path = root + "/" + name
        if name in COPIES:
            wipe(path)
        else:
            os.remove(path)


def exists(root, name):
    return name in os.listdir(root)


def recording(store, game, recs, maintain=None):
    # each event of recs applied to game and recorded, then maintain() when maintain(i)
    # says so for the event's index i; yields i after each event
    for i, rec in enumerate(recs):
        step(game, rec)
        store.record(game, rec)
        if maintain is not None and maintain(i):
            store.maintain()
        yield i


def play_into(store, game, recs, maintain=False):
    # every event of recs applied to game and recorded (maintain() after each when asked),
    # then the store closed
    for _ in recording(store, game, recs, (lambda i: True) if maintain else None):
        pass
    store.close()


def new_store(root, rules):
    # an emptied store holding a new game of `rules`: (store, game)
    wipe(root)
    store = journal_load.store(root)
    game = new(rules)
    store.new_game(game)
    return store, game


def stored(root, rules, recs, maintain=True):
    # a store holding new_game + recs; returns the game as played in memory
    store, game = new_store(root, rules)
    play_into(store, game, recs, maintain)
    return game


def load(root):
    store = GameStore(root)
    game, status = journal_load.load(store)
    store.close()
    return game, status


def two_places(root):
    # (played, cut): a store's folder, and one for what a power cut leaves of it
    played, cut = root + "/played", root + "/cut"
    for where in (played, cut, cut + "/a", cut + "/b"):
        os.mkdir(where)
    return played, cut


def load_now(played, cut):
    # what a power cut now would leave of the store in `played` (its files as they are:
    # copy b's last frame is committed at the next maintain_piece() or event), read back
    # in `cut`, so that the load's repairs leave the store being played alone
    restore_all(cut, save_all(played))
    return load(cut)


def prefixes(rules, recs):
    # the game after each prefix of recs (json and history), for "longest valid prefix"
    game = new(rules)
    out = [(game.state_json(), game.history.tobytes())]
    for rec in recs:
        step(game, rec)
        out.append((game.state_json(), game.history.tobytes()))
    return out


def is_prefix(states, game, count):
    # game is the game after new_game and the first count events
    return game is not None and states[count] == (game.state_json(), game.history.tobytes())


def save_all(root):
    # every file of the store, by its path below root ("a/game.snp", ...)
    saved = {}
    for name in os.listdir(root):
        if name in COPIES:
            for inner in os.listdir(root + "/" + name):
                saved[name + "/" + inner] = read(root + "/" + name + "/" + inner)
        else:
            saved[name] = read(root + "/" + name)
    return saved


def restore_all(root, saved):
    wipe(root)
    for name in saved:
        write(root + "/" + name, saved[name])


def generation_of(snapshot):
    """The generation in a snapshot file's header (-1: not a snapshot)."""
    if snapshot is None or len(snapshot) < 8 or bytes(snapshot[0:4]) not in (b"PBS1", b"PBS2"):
        return -1
    return int.from_bytes(bytes(snapshot[4:8]), "little")


def pbs1(gen, payload):
    """A snapshot file as firmware before game.his wrote it: b"PBS1", generation, length,
    CRC-32 of those and the payload (the whole game, rules_core.snapshot.pack)."""
    head = bytearray(16)
    head[0:4] = b"PBS1"
    head[4:8] = gen.to_bytes(4, "little")
    head[8:12] = len(payload).to_bytes(4, "little")
    head[12:16] = crc32(payload, crc32(head[4:12])).to_bytes(4, "little")
    return bytes(head) + bytes(payload)


def newest_snapshot(files, copy):
    """Which of a copy's two snapshot files holds the newer generation (they alternate),
    and which the one before: ("game.bak", "game.snp") or the other way round."""
    snp = generation_of(files.get(copy + "/game.snp"))
    bak = generation_of(files.get(copy + "/game.bak"))
    return ("game.bak", "game.snp") if bak > snp else ("game.snp", "game.bak")


def case_roundtrip():
    root = scratch_dir()
    for rules in ("ddbu", "ceb", "russian"):
        recs = make_events(rules, 90, 11)
        game = stored(root, rules, recs)
        back, status = load(root)
        check(status == OK, "%s: status %r" % (rules, status))
        check(same(back, game), rules + ": resumed game differs")
        game.undo()
        back.undo()
        check(same(back, game), rules + ": undo after resume differs")


def case_snapshot_file_is_the_packed_game():
    # written piece by piece, the snapshot on flash is still header + snapshot.pack(game),
    # less the history's whole chunks, which are in game.his
    from rules_core import snapshot

    root = scratch_dir()
    recs = make_events("long", 200, 3)
    game = stored(root, "long", recs, maintain=False)
    journal_load.store(root).new_game(game)  # a compaction of the whole game
    whole = game.history.count // 128
    check(whole >= 1, "the game fills a chunk of its history")
    packed = snapshot.pack(game, whole)
    chunks = b"".join(bytes(c) for c in game.history.chunks[:whole])
    for copy in COPIES:
        data = read(root + "/" + copy + "/" + newest_snapshot(save_all(root), copy)[0])
        check(data[24:] == packed, copy + ": the snapshot is not snapshot.pack(game, chunks)")
        _, payload, filed, crc = journal_load._parse_snapshot(data)
        check(payload is not None and bytes(payload) == packed, copy + ": header CRC")
        check((filed, crc) == (whole, crc32(chunks)), copy + ": the chunks it leaves out")
        check(read(root + "/" + copy + "/game.his") == chunks, copy + ": game.his")


def case_a_compaction_opens_each_journal_once():
    # The appends go through the handle that wrote the new journal's header: opening a
    # file by its path is littlefs's costliest step of a compaction (docs/persistence.md),
    # and the journal used to be opened a second time. Each copy: its snapshot slot and
    # its journal, once a compaction; the game still reads back whole.
    root = scratch_dir()
    store, game = new_store(root, "ddbu")
    opened = []
    real = open

    def counting(path, mode="r"):
        opened.append(path)
        return real(path, mode)

    journal.open = counting  # (a global of the module's before the built-in)
    try:
        play_into(store, game, make_events("ddbu", 40, 9), maintain=True)
    finally:
        delattr(journal, "open")
    for copy in COPIES:
        where = root + "/" + copy + "/"
        snapshots = len([p for p in opened if p in (where + "game.snp", where + "game.bak")])
        journals = len([p for p in opened if p == where + "game.jrn"])
        check(snapshots >= 3, "%s: %d compactions, not 3 or more" % (copy, snapshots))
        check(journals == snapshots, "%s: the journal opened %d times in %d compactions"
              % (copy, journals, snapshots))
    back, status = load(root)
    check(status == OK and same(back, game), "the game does not read back whole")


def case_a_resumed_store_makes_no_directory():
    # A store read back has opened both copies' journals, so their directories are there:
    # its compactions do not ask the filesystem to make them again (on littlefs a path
    # search each, at the first compaction after every boot). A new store still makes them.
    root = scratch_dir()
    recs = make_events("ddbu", 60, 4)
    game = stored(root, "ddbu", recs[:20])
    made = []

    class CountingOs:
        def __getattr__(self, name):
            return getattr(os, name)

        def mkdir(self, path):
            made.append(path)
            return os.mkdir(path)

    journal.os = CountingOs()
    try:
        store = GameStore(root)
        back, status = journal_load.load(store)
        check(status == OK and same(back, game), "resume before going on")
        first = store.generation
        for rec in recs[20:]:
            step(game, rec)
        play_into(store, back, recs[20:], maintain=True)
        check(store.generation - first >= 3, "%d compactions, not 3 or more"
              % (store.generation - first))
        copies = [p for p in made if p.startswith(root + "/")]
        check(not copies, "a resumed store made %r" % copies)
        back, status = load(root)
        check(status == OK and same(back, game), "the game does not read back whole")
        del made[:]
        other = root + "/other"
        os.mkdir(other)
        new_store(other, "ddbu")
        check(made == [other, other + "/a", other + "/b"],
              "a new store made %r, not its folder and two copies" % made)
    finally:
        journal.os = os


def case_load_after_every_event():
    # the files as a power cut leaves them once record() has returned (copy b's frame
    # may not be committed yet: it is at the next maintain_piece() or event) read back
    played, cut = two_places(scratch_dir())
    recs = make_events("ddbu", 120, 5)
    store, game = new_store(played, "ddbu")
    for i in recording(store, game, recs, maintain=lambda i: i % 3):
        back, status = load_now(played, cut)
        check(status == OK and same(back, game), "event %d not on flash" % i)
    store.close()


def case_resumed_store_goes_on():
    root = scratch_dir()
    recs = make_events("ceb", 80, 3)
    game = stored(root, "ceb", recs[:40])
    for part in (recs[40:60], recs[60:]):
        store = GameStore(root)
        back, status = journal_load.load(store)
        check(same(back, game), "resume before going on")
        for rec in part:
            step(game, rec)
        play_into(store, back, part)
    back, status = load(root)
    check(status == OK and same(back, game), "events after a resume were lost")


def case_the_reader_is_dropped_after_boot_and_comes_back():
    import sys

    from firmware.errors import forget

    root = scratch_dir()
    recs = make_events("ddbu", 30, 9)
    game = stored(root, "ddbu", recs)
    back, status = load(root)
    check("boardlib.journal_load" in sys.modules, "load() reads with boardlib.journal_load")
    forget(("boardlib.journal_load",))  # as the board drops it (firmware.app)
    check("boardlib.journal_load" not in sys.modules, "the reader is still held")
    import boardlib

    check(not hasattr(boardlib, "journal_load"), "the package still holds the reader")
    from boardlib import journal_load as again  # read from its file again

    check(again is not journal_load, "the dropped module came back")
    store = GameStore(root)
    back, status = again.load(store)
    store.close()
    check(status == OK and same(back, game), "a second load after the reader was dropped")
    sys.modules["boardlib.journal_load"] = journal_load  # the one crashes_at patches
    boardlib.journal_load = journal_load


def case_nothing_stored():
    root = scratch_dir()
    wipe(root)
    check(load(root) == (None, NONE), "empty directory")
    write(root + "/game.jrn", b"")
    check(load(root) == (None, NONE), "only an empty journal")
    if not exists(root, "a"):
        os.mkdir(root + "/a")
    write(root + "/a/game.jrn", b"")
    check(load(root) == (None, NONE), "only an empty journal in a copy")


HEADER = 12  # a journal's header: magic, generation, CRC


def journal_frames(root):
    data = read(root + "/a/game.jrn")
    check(data == read(root + "/b/game.jrn"), "the copies' journals differ")
    ends = []
    pos = HEADER
    while pos < len(data):
        pos += 1 + data[pos] + 4
        ends.append(pos)
    return data, ends


def case_cut_off_journal():
    root = scratch_dir()
    recs = make_events("ddbu", 30, 9)
    stored(root, "ddbu", recs, maintain=False)
    data, ends = journal_frames(root)
    in_journal = len(ends)
    states = prefixes("ddbu", recs)
    whole = len(recs)
    check(in_journal >= 3, "journal too short for the test")
    for cut in range(HEADER, len(data)):
        keep = 0
        for e in ends:
            if e <= cut:
                keep += 1
        # both copies cut alike: the longest valid prefix, and it says so
        stored(root, "ddbu", recs, maintain=False)
        write(root + "/a/game.jrn", data[:cut])
        write(root + "/b/game.jrn", data[:cut])
        back, status = load(root)
        want = whole - in_journal + keep
        check(is_prefix(states, back, want),
              "cut at %d: not the longest valid prefix" % cut)
        check(status == (OK if cut in ends or cut == HEADER else TRUNCATED),
              "cut at %d: status %r" % (cut, status))
        # one copy cut: the other has every event
        stored(root, "ddbu", recs, maintain=False)
        write(root + "/" + COPIES[cut % 2] + "/game.jrn", data[:cut])
        back, status = load(root)
        check(status == OK and is_prefix(states, back, whole),
              "cut at %d of one copy: status %r or an event lost" % (cut, status))
        back, status = load(root)  # the repair left both copies whole
        check(status == OK and is_prefix(states, back, whole), "after the repair")


def case_corrupt_journal():
    root = scratch_dir()
    recs = make_events("russian", 30, 4)
    stored(root, "russian", recs, maintain=False)
    data, ends = journal_frames(root)
    states = prefixes("russian", recs)
    base = len(recs) - len(ends)
    for pos in range(len(data)):
        bad = bytearray(data)
        bad[pos] ^= 0x10
        # the same damage in both copies: the events before it, and it says so
        stored(root, "russian", recs, maintain=False)
        write(root + "/a/game.jrn", bad)
        write(root + "/b/game.jrn", bad)
        back, status = load(root)
        check(status == TRUNCATED, "flip at %d: status %r" % (pos, status))
        before = 0
        for e in ends:
            if e <= pos:
                before += 1
        if pos < HEADER:
            before = 0  # a damaged header: none of the journal can be trusted
        check(is_prefix(states, back, base + before),
              "flip at %d: events before the damage were lost" % pos)
        # in one copy: nothing lost
        stored(root, "russian", recs, maintain=False)
        write(root + "/" + COPIES[pos % 2] + "/game.jrn", bad)
        back, status = load(root)
        check(status == OK and is_prefix(states, back, len(recs)),
              "flip at %d of one copy: status %r or an event lost" % (pos, status))


def case_garbage_after_journal():
    root = scratch_dir()
    recs = make_events("ceb", 30, 8)
    game = stored(root, "ceb", recs, maintain=False)
    data = read(root + "/a/game.jrn")
    for junk in (b"\x00", b"\xff" * 7, b"\x04\x01\x02\x03\x04\x00\x00\x00\x00", data[HEADER:]):
        for copies in (COPIES, COPIES[:1], COPIES[1:]):
            stored(root, "ceb", recs, maintain=False)
            for name in copies:
                write(root + "/" + name + "/game.jrn", data + junk)
            back, status = load(root)
            # something is there that is not a valid event: maybe the event being written
            # when the power went, damaged; every valid one is kept
            check(status == TRUNCATED and same(back, game), "junk %r cost an event" % junk)


def case_truncated_then_goes_on():
    root = scratch_dir()
    recs = make_events("ddbu", 40, 2)
    stored(root, "ddbu", recs[:25], maintain=False)
    data = read(root + "/a/game.jrn")
    write(root + "/a/game.jrn", data[:-2])
    write(root + "/b/game.jrn", data[:-2])
    store = GameStore(root)
    game, status = journal_load.load(store)
    check(status == TRUNCATED, "status %r" % status)
    play_into(store, game, recs[25:])
    back, status = load(root)
    check(status == OK and same(back, game), "events after a truncated resume lost")


def case_corrupt_snapshot():
    root = scratch_dir()
    recs = make_events("ddbu", 60, 6)
    store, game = new_store(root, "ddbu")
    at_gen = {store.generation: (game.state_json(), game.history.tobytes())}
    for _ in recording(store, game, recs, maintain=lambda i: True):
        if store.generation not in at_gen:  # a compaction: the snapshot holds this state
            at_gen[store.generation] = (game.state_json(), game.history.tobytes())
    gen = store.generation
    store.close()
    saved = save_all(root)
    newest, before = newest_snapshot(saved, "a")
    check(newest_snapshot(saved, "b") == (newest, before), "the copies alternate apart")
    snap = saved["a/" + newest]
    check(snap == saved["b/" + newest], "the copies' snapshots differ")
    for pos in (0, 5, 13, len(snap) // 2, len(snap) - 1):
        bad = bytearray(snap)
        bad[pos] ^= 0x01
        # one copy damaged: the other one's, nothing lost
        restore_all(root, saved)
        write(root + "/" + COPIES[pos % 2] + "/" + newest, bad)
        back, status = load(root)
        check(status == OK and same(back, game), "flip at %d of one copy: lost" % pos)
        # both: the snapshot before stands in, an older state, and it says so
        restore_all(root, saved)
        write(root + "/a/" + newest, bad)
        write(root + "/b/" + newest, bad)
        back, status = load(root)
        check(status == TRUNCATED, "status %r" % status)
        check((back.state_json(), back.history.tobytes()) == at_gen[gen - 1],
              "flip at %d: not the previous snapshot" % pos)
    for name in COPIES:
        write(root + "/" + name + "/" + newest, b"PBS1 nonsense")
        write(root + "/" + name + "/" + before, b"")
    check(load(root) == (None, CORRUPT), "nothing readable must say CORRUPT")
    # a new game still starts on top of the wreck
    store = GameStore(root)
    journal_load.load(store)
    fresh = new("ceb")
    store.new_game(fresh)
    store.record(fresh, recs[0])
    fresh.apply(recs[0])
    store.close()
    back, status = load(root)
    check(status == OK and same(back, fresh), "a new game after a corrupt one")


def case_bad_records():
    root = scratch_dir()
    recs = make_events("ddbu", 20, 1)
    game = stored(root, "ddbu", recs)
    store = GameStore(root)
    game, _ = journal_load.load(store)
    for bad in (b"", bytes(65), "text"):
        try:
            store.record(game, bad)
        except (ValueError, TypeError):
            pass
        else:
            raise AssertionError("record %r accepted" % (bad,))
    store.close()
    back, status = load(root)
    check(status == OK and same(back, game), "a refused record changed the store")
    # the game took an event whose record the store refused: the next write is a snapshot
    store = GameStore(root)
    game, _ = journal_load.load(store)
    game.apply(recs[0])
    try:
        store.record(game, "not bytes")
    except TypeError:
        pass
    store.maintain()
    store.close()
    back, status = load(root)
    check(same(back, game), "an event whose record was refused is not on flash")


class _Probe:
    # a journal that notes the heap in use at each write and flush (MicroPython's gc)
    def __init__(self, mem_alloc):
        self.mem_alloc = mem_alloc
        self.in_use = 0

    def write(self, buf):
        self.in_use = self.mem_alloc()
        return len(buf)

    def flush(self):
        self.in_use = self.mem_alloc()

    def close(self):
        pass


_crc_probe = []  # (the probe, the CRC function) while a case looks


def _crc_put_noting(data, length, out, at):
    # journal.crc32_put, noting the heap in use (a plain function: a closure or a bound
    # method of 4 arguments takes its arguments' room from the heap)
    probe = _crc_probe[0]
    probe.in_use = probe.mem_alloc()
    _crc_probe[1](data, length, out, at)


def case_an_events_append_takes_no_frame_from_the_heap():
    # docs/performance.md, "The journal's append": record(), the frame it builds and copy
    # b's commit at the next maintain_piece() keep their frames within the 11 words
    # MicroPython keeps on the C stack (py/objfun.c) and make nothing: the heap in use
    # while the frame's CRC is taken, while it is written and while copy b commits, against
    # before the call, shows any.
    micropython_only("gc.mem_alloc")
    import gc

    root = scratch_dir()
    store, game = new_store(root, "ddbu")
    real = (store._journal_a, store._journal_b)
    probe_a, probe_b, probe_crc = _Probe(gc.mem_alloc), _Probe(gc.mem_alloc), _Probe(gc.mem_alloc)
    _crc_probe[:] = [probe_crc, journal.crc32_put]
    store._journal_a, store._journal_b = probe_a, probe_b
    journal.crc32_put = _crc_put_noting
    seen = []
    try:
        for i, rec in enumerate(make_events("ddbu", 4, 3)):
            step(game, rec)
            gc.collect()
            before = gc.mem_alloc()
            store.record(game, rec)
            framed, written = probe_crc.in_use - before, probe_b.in_use - before
            before = gc.mem_alloc()
            store.maintain_piece()
            if i:  # once before: what a record's first frame makes is made
                seen.append((framed, written, probe_b.in_use - before))
    finally:
        journal.crc32_put = _crc_probe[1]
        del _crc_probe[:]
        store._journal_a, store._journal_b = real
    store.close()
    check(seen == [(0, 0, 0)] * 3,
          "bytes from the heap while a frame was made, written and committed: %r" % (seen,))


class Crash(Exception):
    pass


class CrashingOs:
    # os and open for the journal module that fail at the n-th change to the files
    def __init__(self, n):
        self.n = n
        self.sep = "/"

    def tick(self):
        self.n -= 1
        if self.n == 0:
            raise Crash()

    def rename(self, a, b):
        self.tick()
        os.rename(a, b)

    def mkdir(self, path):
        os.mkdir(path)

    def remove(self, path):
        self.tick()
        os.remove(path)

    def statvfs(self, path):
        return os.statvfs(path)

    def stat(self, path):
        return os.stat(path)

    def open(self, path, mode="r"):
        if "r" not in mode:
            self.tick()
        return open(path, mode)


def crashes_at(n, action, *args):
    # action(*args) with the journal's n-th change to the files crashing; True if it finished
    crashing = CrashingOs(n)
    for module in (journal, journal_load):  # the writer, and the reader's repairs
        module.os = crashing
        module.open = crashing.open
    try:
        action(*args)
        return True
    except Crash:
        return False
    finally:
        for module in (journal, journal_load):
            module.os = os
            del module.open


def case_compaction_crash_windows():
    root = scratch_dir()
    recs = make_events("ceb", 40, 12)
    for n in range(1, 30):
        store, game = new_store(root, "ceb")
        i = 0
        while store.records == 0 or store._journal_bytes + 9 <= store.journal_limit:
            step(game, recs[i])
            store.record(game, recs[i])
            i += 1
        finished = crashes_at(n, store.maintain)
        try:
            store.close()
        except Exception:
            pass
        back, status = load(root)
        check(status == OK, "crash at step %d: status %r" % (n, status))
        check(same(back, game), "crash at step %d of compaction lost the game" % n)
        if finished:
            break
    # per copy: the snapshot over the older one, then the new journal
    check(finished and n > 4, "compaction had fewer steps than expected: %d" % n)


def case_a_store_never_read_writes_nothing():
    """A store writes a new game only once it knows what the flash holds (load() or
    journal_load.store()): otherwise a stored game's files could pass for the new one's."""
    root = scratch_dir()
    recs = make_events("ddbu", 9, 13)
    old = stored(root, "ddbu", recs)
    store = GameStore(root)
    try:
        store.new_game(new("ceb"))
        check(False, "a store never read wrote a new game")
    except ValueError as exc:
        check("not read" in str(exc), "unclear refusal: %r" % exc)
    back, status = load(root)
    check(status == OK and same(back, old), "the stored game changed: status %r" % status)
    fresh = new("ceb")
    journal_load.store(root).new_game(fresh)
    back, status = load(root)
    check(status == OK and same(back, fresh), "journal_load.store() did not write it")


def case_new_game_never_takes_an_old_journal():
    root = scratch_dir()
    recs = make_events("ddbu", 9, 13)
    for n in range(1, 14):
        stored(root, "ddbu", recs, maintain=False)  # an old game with a journal
        store = journal_load.store(root)  # not loaded first: the board starts a new game at once
        game = new("russian")
        crashes_at(n, store.new_game, game)
        back, status = load(root)
        if back is not None and back.rules == "russian":
            check(same(back, game), "crash at step %d: old events joined the new game" % n)
        else:
            check(back is not None and back.rules == "ddbu", "crash at step %d: no game" % n)




def case_copy_taken_back():
    root = scratch_dir()
    # littlefs dropping a damaged commit takes one copy back by many events, or a
    # generation: the other copy has them, and the next load finds both whole again
    recs = make_events("ceb", 60, 21)
    states = prefixes("ceb", recs)
    stored(root, "ceb", recs[:20])
    older = save_all(root)
    for end in (23, 31, 60):
        game = stored(root, "ceb", recs[:end])
        newer = save_all(root)
        for name in COPIES:
            restore_all(root, newer)
            for path in older:
                if path.startswith(name + "/"):
                    write(root + "/" + path, older[path])
            back, status = load(root)
            check(status == OK and same(back, game), "copy %s taken back: lost" % name)
            back, status = load(root)
            check(status == OK and same(back, game), "copy %s: after the repair" % name)
    check(is_prefix(states, game, 60), "the reference game")


def case_old_layout_is_read_and_moved():
    root = scratch_dir()
    # older firmware kept one copy in the directory itself, its journal header without
    # a CRC: such a game resumes, and is then kept in the two copies
    recs = make_events("ddbu", 30, 17)
    game = stored(root, "ddbu", recs, maintain=False)
    files = save_all(root)
    snap = files["a/" + newest_snapshot(files, "a")[0]]
    journal = read(root + "/a/game.jrn")
    wipe(root)
    write(root + "/game.snp", pbs1(generation_of(snap), snap[24:]))  # (no whole chunk)
    write(root + "/game.jrn", b"PBJ1" + journal[4:8] + journal[HEADER:])
    back, status = load(root)
    check(status == OK and same(back, game), "old layout: status %r or lost" % status)
    check(not exists(root, "game.snp") and not exists(root, "game.jrn"), "old files kept")
    back, status = load(root)
    check(status == OK and same(back, game), "after the move")


def shots(count, seed):
    # plain shots, which a long game takes in any state
    rng = Rng(seed)
    return [ev.encode_shot((0, 1, 4, 5, 16, 31, 2)[rng.below(7)], rng.below(5) // 4, ())
            for _ in range(count)]


def history_files(root):
    return [read(root + "/" + copy + "/game.his") for copy in COPIES]


def case_format_before_the_history_file():
    # a game stored by the firmware before game.his (tests/device/journal_sample_pbs1.py:
    # its files as it wrote them) resumes exactly, goes on, and is then kept in game.his
    import binascii

    from device import journal_sample_pbs1 as sample

    root, cut = two_places(scratch_dir())
    for copy in COPIES:
        os.mkdir(root + "/" + copy)
    for name in sample.FILES:
        for copy in COPIES:
            write(root + "/" + copy + "/" + name, binascii.unhexlify(sample.FILES[name]))
    records = sample.EVENTS
    game = Game("ddbu", distance=sample.DISTANCE)
    for k in range(0, len(records), 8):
        step(game, binascii.unhexlify(records[k:k + 8]))
    check(game.history.count >= 256, "the sample holds two chunks of history")
    store = GameStore(root)
    back, status = journal_load.load(store)
    check(status == OK and same(back, game), "the older format: status %r or lost" % status)
    for i, rec in enumerate(shots(150, 4)):
        step(game, rec)
        step(back, rec)
        store.record(back, rec)
        store.maintain()
        if i % 50 == 49:
            again, status = load_now(root, cut)
            check(status == OK and same(again, game), "event %d after the resume" % i)
    store.close()
    whole = game.history.count // 128
    for copy in COPIES:
        files = save_all(root)
        check(files[copy + "/" + newest_snapshot(files, copy)[0]][0:4] == b"PBS2",
              copy + ": the snapshot is not the new layout")
        check(len(files[copy + "/game.his"]) == whole * 624, copy + ": game.his")
    back, status = load(root)
    for _ in range(200):  # back through what the older firmware stored
        game.undo()
        back.undo()
    check(same(back, game), "undo after the move")


def case_history_file_damaged_in_one_copy():
    # a damaged, short or missing game.his in one copy: the other copy's, nothing lost;
    # the load writes the damaged copy's again
    root = scratch_dir()
    recs = make_events("long", 360, 5)
    game = stored(root, "long", recs)
    saved = save_all(root)
    check(game.history.count >= 256, "the game fills two chunks")
    whole = saved["a/game.his"]
    check(whole == saved["b/game.his"] and len(whole) == 624 * (game.history.count // 128),
          "the copies' game.his")
    flipped = bytearray(whole)
    flipped[700] ^= 0x10
    for i in range(len(COPIES)):
        path = root + "/" + COPIES[i] + "/game.his"
        for bad in (flipped, whole[:-1], whole[:624], None):
            restore_all(root, saved)
            if bad is None:
                os.remove(path)
            else:
                write(path, bad)
            back, status = load(root)
            check(status == OK and same(back, game), "game.his of %s: lost" % COPIES[i])
            check(history_files(root) == [whole, whole], "game.his not written again")
            # (the other copy's can go now: the repaired one holds the history)
            os.remove(root + "/" + COPIES[1 - i] + "/game.his")
            back, status = load(root)
            check(status == OK and same(back, game), "after the repair")


def case_history_file_damaged_in_both_copies():
    # no copy holds the history the snapshots leave out: nothing readable (Err 42), no
    # exception; a new game starts on top
    root = scratch_dir()
    recs = make_events("long", 300, 8)
    game = stored(root, "long", recs)
    check(game.history.count >= 128, "the game fills a chunk")
    for copy in COPIES:
        data = bytearray(read(root + "/" + copy + "/game.his"))
        data[100] ^= 1
        write(root + "/" + copy + "/game.his", data)
    check(load(root) == (None, CORRUPT), "a lost history must say CORRUPT")
    store = GameStore(root)
    journal_load.load(store)
    fresh = new("ddbu")
    store.new_game(fresh)
    store.close()
    back, status = load(root)
    check(status == OK and same(back, fresh), "a new game after a lost history")


def case_undo_back_across_a_chunk_end():
    # a chunk kept in game.his changes again after undos back into it: every state
    # reads back, also when the undos and the new events that fill the chunk again come
    # between two compactions (the journal holds 12 events)
    root, cut = two_places(scratch_dir())
    for back_by in (2, 5, 12, 40):
        store, game = new_store(root, "long")
        for _ in recording(store, game, shots(130, back_by), maintain=lambda i: True):
            pass
        store.compact(game)  # the first chunk into game.his
        plan = [UNDO_RECORD] * back_by + shots(back_by + 20, 100 + back_by)
        for i in recording(store, game, plan):
            back, status = load_now(root, cut)
            check(status == OK and same(back, game), "back by %d, event %d" % (back_by, i))
        store.close()
        whole = game.history.count // 128
        check(history_files(root)[0][:624 * whole] == b"".join(
            bytes(c) for c in game.history.chunks[:whole]), "game.his is not the game's")
