"""Reading a stored game back at boot (a boardlib.journal.GameStore): the three named steps
of docs/persistence.md and the checks of every file they read.

    from boardlib import journal_load
    game, status = journal_load.load(store)   # (game or None, a status: GameStore.OK, ...)
    errors.forget(("boardlib.journal_load",))  # once every store is read (firmware.app)
    store = journal_load.store("/data/game")  # a tool's new game over whatever is stored

Apart from boardlib.journal, which writes and stays loaded, and above it (it reads the
format's names there): a board reads its game once, when it starts, and then drops this
module (firmware.errors.forget), so that its code does not stay in the heap. What only
reading the flash needs is here too: older firmware's formats, the snapshot slots each
copy writes next, the highest generation stored. A store writes nothing before it was
read (its first compaction refuses with ValueError): a board reads its stores first, and
never loads this module again; a tool that writes a new game without reading the stored
one takes its store from store(), which looks at the flash for those.
"""

import os
import struct

from boardlib.crc32 import crc32
from boardlib.journal import (
    _BAK,
    _COPIES,
    _HIS,
    _JRN,
    _OLD_FILES,
    _SNP,
    _TMP,
    UNDO_RECORD,
    GameStore,
)

try:
    from micropython import const
except ImportError:  # CPython: the value itself
    const = lambda value: value

# The magics and sizes of boardlib.journal's format (compile-time constants there, which
# MicroPython keeps out of the module's names: so given again; tests/test_journal.py
# checks them).
_SPLIT_MAGIC = const(b"PBS2")
_JOURNAL_MAGIC = const(b"PBJ2")
_SPLIT_HEADER = const(24)
_JOURNAL_HEADER = const(12)
_MAX_RECORD = const(64)
# Older firmware's formats, read here alone (the store writes PBS2 and PBJ2): the whole
# history in the snapshot, and a journal header without its CRC.
_SNAP_MAGIC = const(b"PBS1")
_SNAP_HEADER = const(16)  # magic, generation, payload length, CRC-32
_OLD_JOURNAL_MAGIC = const(b"PBJ1")
_OLD_JOURNAL_HEADER = const(8)
# A 1000-shot game packs into about 5 KB; a file claiming far more than any game is damage.
_MAX_FILE = const(65536)


class _Found:
    """What `_find_snapshots` read from the copies."""

    def __init__(self):
        self.snapshots = []  # (generation, path) of every snapshot with a valid CRC
        self.fallbacks = []  # paths of the snapshots before the current ones (game.bak)
        self.journals = []  # (generation, data, header size), valid header
        self.proven = 0  # the highest generation a valid file says was stored
        self.damaged_journal = 0  # bytes of the longest journal whose header is damaged
        self.files = False  # anything at all was there
        self.damaged = False  # some file failed its checks
        self.old_layout = False  # files of the single-directory layout
        self.copies = []  # per copy: (snapshot generation or -1, journal bytes)
        self.header = None  # the first valid snapshot header: another copy's that equals
        # it is taken as valid without reading its payload again


def load(store):
    """Read the game stored by `store` back: (game or None, status). Never raises on bad
    data. A compaction under way is dropped first (what it wrote and did not commit is
    littlefs's to take back)."""
    store._drop_compaction()
    store._close_journals()
    store._old_files = _old_layout_there(store)  # removed by the next compaction
    store._slots = []
    store._filed = [0] * len(_COPIES)  # (what _unpack finds in the copies' game.his)
    store._crcs = []
    found = _find_snapshots(store)
    # Nothing proven: past whatever is stored, so that no journal left from an earlier
    # game can ever pass for the next one's.
    store.generation = found.proven or _highest_stored_generation(store)
    game, base = _choose_base(store, found)
    if game is None:
        store.needs_snapshot = True
        return None, (GameStore.CORRUPT if found.files else GameStore.NONE)
    return game, _replay_and_repair(store, game, base, found)


def read(stores):
    """`stores` (boardlib.journal.stores: the game's and the kept game's) read back:
    (store, kept store, game or None, its status, kept game or None). The caller drops
    this module and what it loaded then (boardlib.journal.READERS)."""
    return stores + load(stores[0]) + load(stores[1])[:1]


def store(dirpath, **options):
    """A GameStore(dirpath, **options) ready to write a new game without reading the one
    stored (a store writes nothing until it was read: load() or this). It knows what
    load() finds as it reads: each copy's older snapshot slot, a generation past whatever
    is stored, whether older firmware's files are there."""
    new = GameStore(dirpath, **options)
    new._slots = [_newer_first(new._path(name))[1] for name in _COPIES]
    new.generation = _highest_stored_generation(new)
    new._old_files = _old_layout_there(new)
    return new


def _find_snapshots(store):
    """Step 1: what every copy holds. A snapshot is checked as it streams past (no file
    is held in memory here; only the one chosen is read whole), and the second copy's
    only if its header differs from the first's valid one. The older firmware's
    layout is looked at only when neither copy has a snapshot."""
    found = _Found()
    for name in _COPIES:
        _read_copy(store, store._path(name), found, True)
    if not found.snapshots:
        _read_copy(store, store.dirpath, found, False)
    return found


def _read_copy(store, where, found, is_copy):
    snap_gen = -1
    newer, older = _newer_first(where)
    path = where + "/" + newer
    gen, valid = _scan_snapshot(path, found)
    if valid is not None:
        found.files = True
        if valid:
            snap_gen = gen
            found.proven = max(found.proven, gen)
            found.snapshots.append((gen, path))
        else:
            found.damaged = True  # its header cannot be trusted to say which
    found.fallbacks.append(where + "/" + older)
    journal = _read_file(where + "/" + _JRN)
    if journal:  # an empty file: created, and the power went before its header
        found.files = True
        gen, header = _journal_header(journal)
        if header:
            found.journals.append((gen, journal, header))
            found.proven = max(found.proven, gen)
        else:
            found.damaged = True
            found.damaged_journal = max(found.damaged_journal, len(journal))
    if is_copy:
        found.copies.append((snap_gen, journal))
        # the copy's next snapshot goes over its older one (or over a damaged newer one)
        store._slots.append(newer if valid is False else older)
    elif snap_gen >= 0 or journal or _exists(where + "/" + _BAK):
        found.old_layout = True


def _choose_base(store, found):
    """Step 2: the highest generation's snapshot that unpacks, as (game, generation);
    the snapshots before the current ones (game.bak) only if none does."""
    game, gen = _first_that_unpacks(store, found.snapshots, found)
    if game is None:
        older = []
        for path in found.fallbacks:
            bak_gen, valid = _scan_snapshot(path, None)
            if valid is not None:
                found.files = True
            if valid:
                older.append((bak_gen, path))
        game, gen = _first_that_unpacks(store, older, found)
    return game, gen


def _first_that_unpacks(store, snapshots, found):
    snapshots.sort(key=lambda s: -s[0])
    refused = -1
    for gen, path in snapshots:
        if gen == refused:
            continue  # the other copy's, the same bytes: refused the same way
        data = _read_file(path)
        parsed = (0, None) if data is None else _parse_snapshot(data)
        if parsed[1] is None:  # damaged where only its header was compared
            found.damaged = True
            continue
        refused = gen
        try:
            game = _unpack(store, path, parsed)
            if game is not None:
                return game, gen
        except MemoryError:
            raise  # not bad data: the game on flash is fine and must not be replaced
        except Exception:  # any rejection by the codec means this copy is unusable
            pass
        found.damaged = True
    return None, 0


class _Fill:
    """The history's chunks from a copy's game.his, for the codec's unpack (fill(chunk,
    i)): each read into the game's own chunk, their CRC-32 run on and compared with the
    snapshot's at the last. crcs: the CRC after each chunk (GameStore._crcs)."""

    def __init__(self, path, chunks, crc):
        self.path = path
        self.chunks = chunks
        self.crc = crc
        self.crcs = []
        self.file = None
        self.failed = False
        self.size = 0  # a chunk's bytes

    def __call__(self, chunk, i):
        n = 0
        try:
            if self.file is None:
                self.file = open(self.path, "rb")
            n = self.file.readinto(chunk)
        except OSError:  # no such file, or unreadable: as damaged
            pass
        self.size = len(chunk)
        check = crc32(chunk, self.crcs[-1] if self.crcs else 0)
        self.crcs.append(check)
        if n != len(chunk) or i != len(self.crcs) - 1 or i >= self.chunks or (
                i == self.chunks - 1 and check != self.crc):
            self.failed = True
            raise ValueError("game.his does not hold the snapshot's history")

    def close(self):
        if self.file is not None:
            self.file.close()
            self.file = None


def _unpack(store, path, parsed):
    """The game of a snapshot that checked out (_parse_snapshot's), with the chunks of its
    history that it leaves to game.his read from the first copy whose game.his holds them
    (the snapshot's own first); None if none does. Notes in the store which copies' files
    hold them (GameStore._filed, _crcs: what the next compaction need not write again)."""
    payload, chunks, crc = parsed[1], parsed[2], parsed[3]
    if not chunks:
        return _unpack_with(store, payload, None)
    where = path.rsplit("/", 1)[0]
    places = [store._path(name) for name in _COPIES]
    if where in places:  # (a snapshot of the copies' layout: always)
        places.remove(where)
        places.insert(0, where)
    for where in places:
        fill = _Fill(where + "/" + _HIS, chunks, crc)
        try:
            game = _unpack_with(store, payload, fill)
        except ValueError:
            if not fill.failed:
                raise  # the snapshot's own part refused: no other game.his helps
            continue
        finally:
            fill.close()
        if len(fill.crcs) != chunks:
            return None  # (a codec that asked for fewer chunks than the snapshot says)
        store._crcs = fill.crcs
        store._crc_game = game
        store._crc_cuts = game.cuts
        for i in range(len(_COPIES)):
            there = store._path(_COPIES[i])
            if there == where or _history_holds(there + "/" + _HIS, chunks * fill.size,
                                                 crc):
                store._filed[i] = chunks
        return game
    return None


def _unpack_with(store, data, fill):
    """The store's codec's game of `data`; without a codec of its own (the store writes
    rules_core.snapshot's layout then), rules_core.resume's."""
    codec = store.codec
    if codec is None or not hasattr(codec, "unpack"):
        from rules_core import resume

        return resume.unpack(data, fill)
    return codec.unpack(data, fill)


def _history_holds(path, length, crc):
    """True if the file's first `length` bytes have CRC-32 `crc` (streamed)."""
    try:
        with open(path, "rb") as f:
            return _crc_of(f, length, 0) == crc
    except OSError:
        return False


def _crc_of(f, length, check):
    """The CRC-32 of the next `length` bytes of file f, run on from `check`, in small
    pieces; None if the file ends before."""
    piece = bytearray(256)
    while length:
        n = f.readinto(piece)
        if not n:
            return None
        n = min(n, length)
        check = crc32(memoryview(piece)[:n], check)
        length -= n
    return check


def _replay_and_repair(store, game, base, found):
    """Step 3: the longest journal of generation `base` onto `game`; the status; then
    the copies made alike again: a copy whose journal lacks the last frames (the power
    went between the two appends) gets them, anything else is settled by a fresh
    generation in both copies."""
    journal = None
    header = 0
    count = 0
    clean = False
    proven_frames = 0  # frames some copy proves were stored (a damaged one counts)
    for gen, data, size in found.journals:
        if gen != base:
            continue
        valid, whole = _frames(data, size, gen, None)
        proven_frames = max(proven_frames, valid if whole else valid + 1)
        if journal is None or valid > count:
            journal, header, count, clean = data, size, valid, whole
    applied = 0
    if journal is not None:
        applied = _frames(journal, header, base, game)[0]
    status = GameStore.OK
    replayed = 0 if journal is None else len(journal)  # its bytes, if all were valid
    if applied < proven_frames or found.proven > base or found.damaged_journal > replayed:
        status = GameStore.TRUNCATED
    store.records = applied
    store._game = game
    if clean and journal is not None and applied == count \
            and _catch_up(store, found, base, journal):
        _open_journals(store, len(journal))
    else:
        store.needs_snapshot = True
        try:
            store.compact(game)
        except OSError:  # flash trouble at boot: keep the game; the next record retries
            store.needs_snapshot = True
    return status


def _open_journals(store, size):
    """The copies' journals opened for the next appends (`size` bytes in each)."""
    try:
        store._journal_a = open(store._path(_COPIES[0], _JRN), "ab")
        store._journal_b = open(store._path(_COPIES[1], _JRN), "ab")
    except OSError:
        store._close_journals()
        raise
    store._journal_bytes = size
    store.needs_snapshot = False
    # both copies' directories hold a journal: the first compaction after a boot does
    # not ask littlefs to make them again (a path search for each, docs/performance.md)
    store._copies_made = True


def _catch_up(store, found, base, journal):
    """True if both copies now hold the snapshot of generation `base` and `journal`:
    they did, or a copy's journal was the start of it and got the rest appended."""
    if found.damaged or found.old_layout or _header_size(journal) != _JOURNAL_HEADER:
        return False
    for filed in store._filed:  # a copy's game.his lacks chunks: a fresh generation
        if filed != len(store._crcs):
            return False
    if len(found.copies) != len(_COPIES):
        return False
    for snap_gen, data in found.copies:
        if snap_gen != base or data is None or journal[: len(data)] != data:
            return False
    for i in range(len(_COPIES)):
        have = len(found.copies[i][1])
        if have < len(journal):
            try:
                with open(store._path(_COPIES[i], _JRN), "ab") as f:
                    f.write(memoryview(journal)[have:])
            except OSError:  # the flash fails: a fresh generation will settle it
                return False
    return True


def _scan_snapshot(path, found=None):
    """(generation, valid) of a snapshot file, reading it in small pieces; valid is None
    when there is no such file, or it is empty. With a `_Found`, a header equal to the one
    it holds is valid at once; the first valid header is kept there."""
    try:
        size = os.stat(path)[6]
        if not size:  # created, and the power went before its contents were committed
            return 0, None
        f = open(path, "rb")
    except OSError:
        return 0, None
    try:
        header = f.read(4)
        hsize = _snapshot_header_size(header)
        if not hsize:
            return 0, False
        header += f.read(hsize - 4)
        if len(header) < hsize:
            return 0, False
        gen, length = struct.unpack_from("<II", header, 4)
        if size != hsize + length or size > _MAX_FILE:
            return 0, False
        if found is not None and found.header == header:
            return gen, True
        check = _crc_of(f, length, crc32(memoryview(header)[4:hsize - 4]))
        if check != struct.unpack_from("<I", header, hsize - 4)[0]:
            return 0, False
        if found is not None and found.header is None:
            found.header = header
        return gen, True
    except OSError:  # unreadable: damaged
        return 0, False
    finally:
        f.close()


def _snapshot_header_size(data):
    """The size of a snapshot's header by its magic (0: not a snapshot)."""
    if data[0:4] == _SPLIT_MAGIC:
        return _SPLIT_HEADER
    if data[0:4] == _SNAP_MAGIC:
        return _SNAP_HEADER
    return 0


def _parse_snapshot(data):
    """(generation, payload, chunks left to game.his, their CRC-32) of a valid snapshot
    file, else (0, None, 0, 0)."""
    hsize = _snapshot_header_size(data)
    if not hsize or len(data) < hsize or len(data) > _MAX_FILE:
        return 0, None, 0, 0
    gen, length = struct.unpack_from("<II", data, 4)
    if len(data) != hsize + length:
        return 0, None, 0, 0
    payload = memoryview(data)[hsize:]  # no copy of a long game's history
    if crc32(payload, crc32(memoryview(data)[4:hsize - 4])) != struct.unpack_from(
            "<I", data, hsize - 4)[0]:
        return 0, None, 0, 0
    if hsize == _SNAP_HEADER:  # older firmware's: the whole history in the payload
        return gen, payload, 0, 0
    chunks, crc = struct.unpack_from("<II", data, 12)
    return gen, payload, chunks, crc


def _header_size(data):
    """The size of a journal's header by its magic (0: not a journal)."""
    if data[0:4] == _JOURNAL_MAGIC:
        return _JOURNAL_HEADER
    if data[0:4] == _OLD_JOURNAL_MAGIC:
        return _OLD_JOURNAL_HEADER
    return 0


def _journal_header(data):
    """(generation, header size) of a journal whose header is valid, else (0, 0)."""
    size = _header_size(data)
    if not size or len(data) < size:
        return 0, 0
    if size == _JOURNAL_HEADER and crc32(memoryview(data)[0:8]) != struct.unpack_from(
        "<I", data, 8
    )[0]:
        return 0, 0
    return struct.unpack_from("<I", data, 4)[0], size


def _frames(journal, pos, gen, game):
    """Walk the journal's frames from `pos`: (valid frames, whole journal valid). With a
    game, apply each frame to it, stopping at one the game refuses."""
    salt = bytearray(8)
    struct.pack_into("<I", salt, 0, gen)
    count = 0
    end = len(journal)
    view = memoryview(journal)
    while pos < end:
        size = journal[pos]
        stop = pos + 1 + size + 4
        if size < 1 or size > _MAX_RECORD or stop > end:
            return count, False
        struct.pack_into("<I", salt, 4, count)
        if crc32(view[pos: pos + 1 + size], crc32(salt)) != struct.unpack_from(
            "<I", journal, pos + 1 + size
        )[0]:
            return count, False
        if game is not None:
            record = journal[pos + 1: pos + 1 + size]
            try:
                if record == UNDO_RECORD:
                    game.undo()
                else:
                    game.apply(record)
            except MemoryError:
                raise  # not bad data: better a reset and another try than a shorter game
            except Exception:  # a record the game refuses: the rest cannot follow from it
                return count, False
        count += 1
        pos = stop
    return count, True


# (The paths below are looked at once: made here, not kept by the store's _path.)
def _old_layout_there(store):
    for name in (_SNP, _JRN, _BAK):
        if _exists(store.dirpath + "/" + name):
            return True
    return False


def _highest_stored_generation(store):
    highest = 0
    paths = [store.dirpath + "/" + name for name in _OLD_FILES]
    for copy in _COPIES:
        for name in (_SNP, _BAK, _TMP, _JRN):
            paths.append("%s/%s/%s" % (store.dirpath, copy, name))
    for path in paths:
        data = _read_file(path, 8)
        if data is not None and len(data) >= 8:
            highest = max(highest, struct.unpack_from("<I", data, 4)[0])
    return highest


def _exists(path):
    try:
        os.stat(path)
        return True
    except OSError:
        return False


def _claimed_generation(path):
    """The generation a snapshot file's header claims (-1: no file, or not a snapshot).
    Unchecked: it only orders the two snapshot files of a copy before they are read."""
    try:
        with open(path, "rb") as f:
            head = f.read(8)
    except OSError:
        return -1
    if len(head) < 8 or (head[0:4] != _SNAP_MAGIC and head[0:4] != _SPLIT_MAGIC):
        return -1
    return struct.unpack_from("<I", head, 4)[0]


def _newer_first(where):
    """(newer, older): the names of the two snapshot files in directory `where`, the one
    whose header claims the higher generation first. Snapshots alternate between them."""
    if _claimed_generation(where + "/" + _BAK) > _claimed_generation(where + "/" + _SNP):
        return _BAK, _SNP
    return _SNP, _BAK


def _read_file(path, limit=_MAX_FILE):
    """The file's bytes, or None if it is missing or unreadable. A file over `limit`
    comes back as its first limit + 1 bytes (more than that means damage)."""
    try:
        size = os.stat(path)[6]
        with open(path, "rb") as f:
            # Ask for the size the file has: read(n) sets aside n bytes at once, and a
            # board's heap may not have a large block to spare.
            return f.read(min(size, limit + 1))
    except OSError:  # unreadable: as good as missing
        return None
