"""The game on flash: a snapshot plus an append-only journal, kept twice, so that neither a
power cut nor one damaged spot on the flash costs a scored event.

    from boardlib import journal_load
    from boardlib.journal import GameStore  # GameStore.OK, TRUNCATED, NONE, CORRUPT
    store = GameStore("/game")
    game, status = journal_load.load(store)  # at boot: the game as it was, or None
    errors.forget(("boardlib.journal_load",))  # read once: its code leaves the heap
    if game is None:
        game = Game("ddbu", distance=(40, 40))
        store.new_game(game)             # settings (and any state) as a fresh snapshot
    rec = events.encode_shot(pins, carom, fouls)
    game.apply(rec)
    store.record(game, rec)              # on flash before the display shows the shot
    game.undo()
    store.record_undo(game)              # undo is an event of its own in the journal
    store.maintain()                     # between shots: compact if the journal is full
    while store.maintain_piece():        # or so, a piece (one sector erased at most) a
        ...                              # step of the board's loop, inputs read between

Two copies, `a/` and `b/` in the store's directory, each its own directory and so its own
littlefs metadata pair. Every write goes to both, copy a first (an event's frame is
committed to copy b a step of the board later, by maintain_piece(): the copies'
directories fill alike, and littlefs would compact both at the same append):

- `game.his`  the history's whole chunks (rules_core.game.History: 128 events and their
  checkpoints, 624 bytes), one after the other, each written once, at the compaction
  after the game passed its end: a snapshot leaves them out, so that a compaction writes
  only the game's state and the chunk it is in, however long the game.
- `game.snp`, `game.bak`  the two snapshot slots: magic, generation, length, the chunks
  it leaves to `game.his` and the CRC-32 of their bytes, CRC-32 of the header and the
  payload, then the codec's bytes (written piece by piece as the codec gives them: no
  copy of a long game in the heap). Snapshots alternate between them: the higher
  generation is the current snapshot, the other the one before it (if both copies of the
  current one are damaged, the game resumes one generation back, with TRUNCATED, rather
  than not at all). Older firmware's snapshots (`PBS1`, the whole history) read as well.
- `game.jrn`  journal: magic, the generation of the snapshot it follows and a CRC-32 of
  both, then one frame per event: length byte, the event record exactly as the game
  applied it, CRC-32 of both salted with the generation and the frame's number (a frame
  from an older journal, or repeated, never passes).
- `game.tmp`  older firmware's snapshot being written (read for its generation only).

littlefs checks each commit to a metadata pair with a CRC and, finding a bad one, drops
it with every later commit of that block: a flipped bit can take one copy back by many
events, or (in a data block) spoil a snapshot. The other copy, in other blocks, still has
them. Reading the game back at boot is boardlib.journal_load's (`load(store)`), apart from
this module so that a board drops its code once the game is read; it works in three named
steps:

1. `_find_snapshots`: read both copies (and the single-directory layout of older
   firmware), noting the highest generation any valid file proves was stored;
2. `_choose_base`: the valid snapshot of the highest generation that unpacks;
3. `_replay_and_repair`: apply the longest valid journal of that generation from either
   copy; if anything proves more was stored than that, the status is TRUNCATED; if the
   copies were not alike, both are rewritten as a fresh generation.

Compaction (`maintain()` or `maintain_piece()` once the journal is full, or `record()` if an
event finds it full) writes, in each copy in turn, the history's chunks the copy's
`game.his` lacks, the next generation's snapshot over the older snapshot slot, and starts
an empty journal of the new generation; `maintain_piece()`
does it a piece at a call, each beginning at most one flash block, and `record()` finishes
a compaction under way before it appends. littlefs replaces a
file's contents only when it is closed, whole, so no rename is needed (a rename costs
littlefs a walk through the directory's whole metadata log). The journal stays within
littlefs's inline file size, so an append erases no data block.
docs/persistence.md says what is guaranteed and what is not.
"""

import os
import struct

# The builtins the event path calls, as this module's globals: MicroPython looks a name
# up in the module's globals first (to the table's first empty slot), then in the
# builtins' table, each time; a global is found at once (docs/performance.md).
from builtins import bytearray, bytes, len, memoryview, type

from boardlib.crc32 import crc32, crc32_put
from rules_core import snapshot

try:
    from micropython import const
except ImportError:  # CPython: the value itself
    const = lambda value: value


# The journal's record for an undo (the game's own records are shots and adjusts; kind 0
# is none of them): replaying it calls game.undo().
UNDO_RECORD = b"\x00\x00\x00\x00"

# (older firmware's formats, PBS1 and PBJ1, are the reader's alone: boardlib.journal_load)
_SPLIT_MAGIC = const(b"PBS2")  # the history's whole chunks in game.his
_JOURNAL_MAGIC = const(b"PBJ2")
_SPLIT_HEADER = const(24)  # magic, generation, length, chunks, their CRC-32, CRC-32
_CHUNK_SHIFT = const(7)  # 128 events a chunk: rules_core.game's (tests/test_journal.py)
_JOURNAL_HEADER = const(12)  # magic, generation, CRC-32 of both
_FRAME_EXTRA = const(5)  # length byte + CRC-32
_MAX_RECORD = const(64)
# littlefs keeps a file of up to cache_size bytes (128 with VfsLfs2's defaults) inline in
# the directory's metadata: appending to it costs no block erase. Past that, every flushed
# append copies the file's last block to a freshly erased one (lib/littlefs/lfs2.c,
# lfs2_file_write: past min(cache_size, block_size / 8), v1.20 to 1.25). 12 + 12 frames
# of 9 bytes: a compaction every 12 events (docs/persistence.md, "Wear and speed").
_JOURNAL_LIMIT = const(120)

_COPIES = ("a", "b")
_SNP = "game.snp"
_TMP = "game.tmp"
_JRN = "game.jrn"
_BAK = "game.bak"
_HIS = "game.his"
# Older firmware kept one copy in the store's directory itself, and a damaged journal as
# game.bad: read, then removed.
_OLD_FILES = (_SNP, _TMP, _BAK, _JRN, "game.bad")
# A compaction in pieces (GameStore.maintain_piece): the snapshot is written _PIECE bytes
# a piece, so that a piece begins at most one block of littlefs's (a block holds 4 KB less
# a few pointers, and a file's first block is begun once it outgrows its inline 128
# bytes): at most one sector erased, 45 ms, and 16 page programs, 6.4 ms (W25Q32JV
# typical; docs/persistence.md, "Compaction in pieces").
_PIECE = const(1024)
_HISTORY = const(0)  # a compaction's stages, per copy
_HCLOSE = const(1)
_WRITE = const(2)
_CLOSE = const(3)
_JOURNAL = const(4)


class GameStore:
    """The stored game in directory `dirpath` (on an already mounted filesystem)."""

    # The statuses of journal_load.load(), here so that a caller needs only the class.
    OK = 0  # the game was read back whole (or there was nothing irregular to repair)
    NONE = 1  # no game stored
    TRUNCATED = 2  # what was read back is older than what the flash proves was stored
    CORRUPT = 3  # files were there but no game could be read back from them

    def __init__(self, dirpath, journal_limit=_JOURNAL_LIMIT, codec=None):
        self.dirpath = dirpath.rstrip("/")  # "" for the root: paths still start with "/"
        self._paths = {}  # names -> path (_path)
        self.journal_limit = journal_limit
        # codec: parts(game) -> the stored bytes as a tuple of buffers, and unpack(bytes)
        # -> game; rules_core.snapshot unless a caller stores something else that way.
        self.codec = codec
        self.generation = 0
        self.records = 0  # frames in the current journal
        self._journal_a = None
        self._journal_b = None
        self._journal_bytes = 0
        # True while the flash lacks something the game has (a write failed, or no journal
        # to append to yet): the next record() or maintain() writes a whole snapshot
        self.needs_snapshot = True
        self._copies_made = False
        # What the flash holds, found when the store is read back (journal_load.load or
        # journal_load.store; it writes nothing before): per copy, the snapshot file the next
        # compaction writes over; older firmware's files there (removed by it)
        self._slots = []
        self._old_files = False
        # record length -> (the generation and frame number, which every frame's CRC
        # starts from, so that a frame from another journal or from another place in this
        # one never passes; then the frame, and the length), made once; and the last one
        self._frames = {}
        self._frame = (bytearray(0), memoryview(b""), 0)
        self._game = None  # the game last stored, for maintain()
        self._last_frame = _FRAME_EXTRA + 4  # size of the last frame appended
        self._job = None  # the compaction under way (_Compaction), if any
        # True while one is (maintain_piece): an attribute, not a property, since the board
        # reads it at every upkeep and a property is a call
        self.compacting = False
        self._b_behind = False  # copy b's journal has frames not yet committed (record)
        # The history's whole chunks that the snapshots leave to game.his: the CRC-32 of
        # chunks 0..i after each chunk i (the game's, as the last compaction found them;
        # _crc_game and _crc_cuts say which game, and after how many of its undos), and
        # per copy how many of them its game.his holds.
        self._crcs = []
        self._crc_game = None
        self._crc_cuts = 0
        self._filed = [0, 0]
        # Called between the pieces of a compaction done all at once (compact(), or
        # record() finishing one): the board feeds its watchdog there.
        self.between = None
        try:
            os.mkdir(dirpath)
        except OSError:  # already there (the usual case)
            pass

    def _path(self, *names):
        # Each path is made once: a new string is looked up among every interned one
        # (py/qstr.c), which cost a compaction about 230,000 instructions on the board.
        path = self._paths.get(names)
        if path is None:
            path = self._paths[names] = self.dirpath + "/" + "/".join(names)
        return path

    def _parts(self, game, filed):
        if self.codec is None:
            self.codec = snapshot
        return self.codec.parts(game, filed)

    # ---- writing -----------------------------------------------------------------------

    def new_game(self, game):
        """Store `game` (usually just set up) as the only game: a fresh snapshot."""
        self.compact(game)

    def record(self, game, record):
        """Append `record`, the event `game` has just applied, and flush it to flash.

        Raises TypeError or ValueError (writing nothing) for a record it cannot frame, and
        OSError when the flash fails. Either way the next record() or maintain() writes a
        whole snapshot of the game, so the flash never misses an event the game has.
        (Its frame and _frame_of's fit on the C stack: a bigger one comes from the heap
        at every call, docs/performance.md.)
        """
        if self._job is not None:
            # A compaction under way (maintain_piece) is finished first: its snapshot is
            # the game before this event, which then goes into the new journal.
            self._frame_of(record)  # (a record that cannot be framed: nothing written)
            self._finish_compaction()
        frame = self._frame_of(record)  # (checked, in its buffer)
        self._game = game
        if self.needs_snapshot or self._journal_bytes + len(frame) > self.journal_limit:
            self.compact(game)  # maintain() was not called in time: compact now
            return
        # Copy b's frame is committed by the next maintain_piece(), which the board calls
        # in a later step (_catch_up_b): the two copies' directories fill alike, and
        # littlefs would compact both (a sector erased each) at the same append. A flash
        # failure leaves a snapshot due (no try block: it would take this frame past 11
        # words, docs/performance.md; the compaction closes the journals first).
        self.needs_snapshot = True
        self._journal_a.write(frame)
        self._journal_a.flush()
        self._journal_b.write(frame)
        self.needs_snapshot = False
        self._b_behind = True
        self._last_frame = len(frame)
        self._journal_bytes += self._last_frame
        self.records += 1

    def _frame_of(self, record):
        """The journal frame of `record` (a view of a buffer made once per length): the
        length byte, the record, and the CRC-32 of both salted with the generation and
        the frame's number. (The checks are inline, a call costing as much as a dozen
        attribute reads, and type() is asked twice rather than kept in a local, so that
        the frame stays within 11 words.)"""
        if type(record) is not bytes and type(record) is not bytearray:
            self._refuse(record)
        size = len(record)
        if size < 1 or size > _MAX_RECORD:
            self._refuse(record)
        frame = self._frame  # the last length's: as a rule, every event's
        if frame[2] != size:
            frame = self._frame_for(size)
        size += 9  # (the frame's end, before the CRC)
        frame[0][9:size] = record
        # the salt: generation and frame number
        struct.pack_into("<II", frame[0], 0, self.generation, self.records)
        crc32_put(frame[0], size, frame[0], size)
        return frame[1]

    def _refuse(self, record):
        self.needs_snapshot = True
        if type(record) is not bytes and type(record) is not bytearray:
            raise TypeError("record must be bytes, not %s" % type(record).__name__)
        raise ValueError("record of %d bytes (1..%d)" % (len(record), _MAX_RECORD))

    def _frame_for(self, size):
        # salt (generation, frame number), then the frame: its CRC covers both, taken in
        # one piece into the frame itself (no 32-bit int is made for it)
        frame = self._frames.get(size)
        if frame is None:
            buf = bytearray(8 + size + _FRAME_EXTRA)
            buf[8] = size
            frame = self._frames[size] = (buf, memoryview(buf)[8:], size)
        self._frame = frame
        return frame

    def maintain(self):
        """Compact if the journal cannot take another event; call it while no shot is in
        progress, so that a scored shot costs only its small append. Returns True if it
        wrote a snapshot. A flash failure is kept for the next record() to retry."""
        game = self._game
        if self._b_behind and not self._catch_up_b():
            return False  # the flash failed: record() retries the snapshot
        if game is None or not self.behind():
            return False
        try:
            if self._job is not None:
                self._finish_compaction()
            else:
                self.compact(game)
        except OSError:  # the flash failed: record() retries the snapshot
            return False
        return True

    def record_undo(self, game):
        """Append an undo that `game` has just done (the same as record(game, UNDO_RECORD))."""
        self.record(game, UNDO_RECORD)

    def compact(self, game):
        """Write `game` as the next generation's snapshot, with an empty journal, in both
        copies, all at once. Raises OSError when the flash fails (ENOSPC when it is full);
        the copy not yet rewritten still holds the game as it was before."""
        self._finish_compaction()  # one under way first: the flash as it was meant to be
        self._begin(game)
        self._finish_compaction()

    # ---- compaction in pieces ----------------------------------------------------------

    def behind(self):
        """True when the flash wants work before the next event: a compaction is under
        way, or the journal cannot take another frame, or a snapshot is due."""
        return self.needs_snapshot or (
            self._journal_bytes + self._last_frame > self.journal_limit)

    def maintain_piece(self):
        """One piece of maintain()'s work: a compaction is begun when the journal is full
        and then goes on by a piece at each call, each piece beginning at most one fresh
        block of the flash (a 4 KB sector erased: 45 ms, up to 400 ms on a worn chip).
        Returns True while there is more to do (a compaction under way, or due after copy
        b's frames): call again soon (the board does at its next step, its inputs
        polled in between). Meanwhile the flash holds the game
        as it was before the compaction, and record() finishes the compaction before it
        appends. A flash failure is kept for the next record() to retry, as maintain()'s."""
        if self._b_behind:  # copy b's frames: a piece of their own
            return self._catch_up_b() and (self.needs_snapshot or (
                self._journal_bytes + self._last_frame > self.journal_limit))
        try:  # (no locals: the frame stays within 11 words with the try block's three)
            if self._job is None:
                if self._game is None or not self.behind():
                    return False
                self._begin(self._game)
            self._piece()
        except OSError:
            return False
        return self._job is not None

    def _catch_up_b(self):
        """Commit copy b's frames (record); False if the flash failed (a snapshot is then
        due, as after a failed record())."""
        self._b_behind = False
        try:
            self._journal_b.flush()
        except OSError:
            self.needs_snapshot = True
            self._close_journals()
            return False
        return True

    def _begin(self, game):
        """Set up the compaction of `game`: its generation, headers and what it writes.
        Nothing is written yet; the journals are closed (the game goes on flash again
        whole)."""
        self._close_journals()
        self.needs_snapshot = True
        self._game = game
        filed = self._file_chunks(game)
        parts = self._parts(game, filed)
        if len(self._slots) != len(_COPIES):
            # Never read back: what the flash holds is unknown (the slots, a generation
            # past whatever is stored, so that no journal left from an earlier game can
            # ever pass for this game's). A board reads its stores first; a tool that
            # writes a new game without reading takes its store from journal_load.store().
            raise ValueError("game store not read (journal_load)")
        # The number is used up before anything is written: a compaction that fails
        # half-way is never followed by a different snapshot of the same generation.
        self.generation += 1
        gen = self.generation
        header = bytearray(_SPLIT_HEADER)
        header[0:4] = _SPLIT_MAGIC
        length = 0
        for part in parts:
            length += len(part)
        struct.pack_into("<IIII", header, 4, gen, length, filed,
                         self._crcs[filed - 1] if filed else 0)
        check = crc32(memoryview(header)[4:20])
        for part in parts:
            check = crc32(part, check)
        struct.pack_into("<I", header, 20, check)
        jheader = bytearray(_JOURNAL_HEADER)
        jheader[0:4] = _JOURNAL_MAGIC
        struct.pack_into("<I", jheader, 4, gen)
        struct.pack_into("<I", jheader, 8, crc32(memoryview(jheader)[0:8]))
        self._make_copies()
        job = self._job = _Compaction(header, parts, jheader)
        self.compacting = True
        job.chunks = game.history.chunks
        job.filed = filed
        job.next_copy(self._filed[0])

    def _file_chunks(self, game):
        """How many of the history's chunks the next snapshot leaves to game.his: every
        whole one (an undo can make one whole no longer). _crcs is brought up to date;
        a copy whose game.his holds chunks that are no longer the game's gets them again
        from the first that differs."""
        crcs = self._crcs
        chunks = game.history.chunks
        whole = game.history.count >> _CHUNK_SHIFT
        if game is not self._crc_game or game.cuts != self._crc_cuts:
            # Another game, or the history was cut since: the chunks kept are checked
            # again (their CRC; at most once a compaction after an undo)
            check = 0
            i = 0
            while i < len(crcs) and i < whole:
                check = crc32(chunks[i], check)
                if check != crcs[i]:
                    break
                i += 1
            del crcs[i:]
            self._crc_game = game
            self._crc_cuts = game.cuts
        del crcs[whole:]
        filed = self._filed  # (what a copy holds past the chunks kept is not the game's)
        for i in range(len(filed)):
            if filed[i] > len(crcs):
                filed[i] = len(crcs)
        while len(crcs) < whole:
            crcs.append(crc32(chunks[len(crcs)], crcs[-1] if crcs else 0))
        return whole

    def _finish_compaction(self):
        """The pieces left of a compaction under way, one after the other (with the
        `between` call after each: the board feeds its watchdog there)."""
        while self._job is not None:
            self._piece()
            between = self.between
            if between is not None and self._job is not None:
                between()

    def _piece(self):
        """The next piece of the compaction under way. Per copy, in order: the history's
        whole chunks its game.his lacks, appended a chunk a piece, and the file's close;
        the snapshot over the copy's older snapshot slot, _PIECE bytes at a time; its close, which
        commits it (littlefs replaces a file's contents only when it is closed, whole, so
        until then a power cut leaves the older snapshot as it was; the newer one stays
        beside it: if both copies of the new one are ever damaged, the game goes back one
        generation, and says so, not to none); the new journal's header, committed before
        the next copy is touched (the file stays open for the appends: opening it again
        would cost a path search)."""
        job = self._job
        i = job.copy
        try:
            if job.stage == _HISTORY:
                # the chunks this copy's game.his lacks, one a piece (624 bytes: at most
                # one block begun), after the ones it holds
                j = self._filed[i]
                chunk = job.chunks[j]
                if job.file is None:
                    path = self._path(_COPIES[i], _HIS)
                    if j:
                        try:
                            there = os.stat(path)[6]
                        except OSError:  # not there
                            there = -1
                        if there != j * len(chunk):  # missing, or chunks past them:
                            j = self._filed[i] = 0  # written whole again
                            chunk = job.chunks[0]
                    # Opened, and the chunk's first byte alone: littlefs commits a new
                    # file to its directory here, or copies the file's last block to a
                    # fresh one (a sector erased either way), and the rest of the chunk
                    # then begins one block at most.
                    job.file = open(path, "r+b" if j else "wb")
                    if j:
                        job.file.seek(j * len(chunk))
                    job.file.write(memoryview(chunk)[:1])
                    job.offset = 1
                    return
                job.file.write(memoryview(chunk)[job.offset:])
                job.offset = 0
                self._filed[i] = j + 1  # (counted once the file is closed: below)
                if j + 1 >= job.filed:
                    job.stage = _HCLOSE
                return
            if job.stage == _HCLOSE:
                # committed: from here the copy's game.his holds them (the current
                # snapshot's chunks are before them, as they were)
                f = job.file
                job.file = None
                f.close()
                job.stage = _WRITE
                return
            if job.stage == _WRITE:
                if job.file is None:
                    job.file = open(self._path(_COPIES[i], self._slots[i]), "wb")
                    job.file.write(job.header)
                    job.check = crc32(memoryview(job.header)[4:20])
                if job.write_piece():
                    job.stage = _CLOSE
                return
            if job.stage == _CLOSE:
                f = job.file
                job.file = None
                f.close()
                if not job.whole():
                    # The game changed under the snapshot in a way it could not follow:
                    # what was written is no snapshot (its CRC fails: read as damage) and
                    # the copy's slot stays. The game as it is now, as a new generation.
                    _close_all(job.journals)
                    self._job = None
                    self.compacting = False
                    self._begin(self._game)
                    return
                # From here a power cut resumes from the new snapshot: the old journal's
                # generation no longer matches it, so its events (all in the snapshot) are
                # not applied twice.
                self._slots[i] = _SNP if self._slots[i] == _BAK else _BAK
                job.stage = _JOURNAL
                return
            # (the appends go through this handle: opened again, littlefs would be sure
            # of its directory's room at the cost of a path search, docs/persistence.md)
            journal = open(self._path(_COPIES[i], _JRN), "wb")
            job.journals.append(journal)
            journal.write(job.jheader)
            journal.flush()
        except OSError:
            if job.stage <= _HCLOSE:
                self._filed[i] = 0  # unknown: written again whole next time
            if job.file is not None:
                _close(job.file)
            _close_all(job.journals)
            self._job = None
            self.compacting = False
            raise
        if i + 1 < len(_COPIES):
            job.copy += 1
            job.next_copy(self._filed[i + 1])
            return
        self._job = None
        self.compacting = False
        self.records = 0
        self._journal_a, self._journal_b = job.journals
        self._journal_bytes = _JOURNAL_HEADER
        self.needs_snapshot = False
        if self._old_files:  # read back and written anew: older firmware's files go
            self._old_files = False
            for name in _OLD_FILES:
                _remove(self._path(name))

    def close(self):
        """Finish a compaction under way, then close the journals."""
        try:
            self._finish_compaction()
        finally:
            self._close_journals()

    def erase(self):
        """Remove the stored game: every file of both copies (and of the older layout).
        The directories stay; the next write starts a generation past the last one."""
        self._drop_compaction()
        self._close_journals()
        for copy in _COPIES:
            for name in (_SNP, _TMP, _BAK, _JRN, _HIS):
                _remove(self._path(copy, name))
        for name in _OLD_FILES:
            _remove(self._path(name))
        self.needs_snapshot = True
        self._game = None
        self._filed = [0, 0]

    # ---- internals ---------------------------------------------------------------------

    def _drop_compaction(self):
        # (what it wrote and did not commit is littlefs's to take back; a snapshot it
        # leaves short fails its CRC, read as damage)
        job = self._job
        if job is not None:
            self._job = None
            self.compacting = False
            if job.file is not None:
                _close(job.file)
            _close_all(job.journals)
            self.needs_snapshot = True

    def _make_copies(self):
        """The copies' directories, the first time; then the store's directory (and its
        parent, on the same filesystem) is made to compact its metadata once, so that
        both blocks of its pair name the copies: one bad block cannot lose them both."""
        if self._copies_made:
            return
        made = False
        for name in _COPIES:
            try:
                os.mkdir(self._path(name))
                made = True
            except OSError:  # there already (or the flash fails: the write will say so)
                pass
        import sys

        if made and sys.implementation.name == "micropython":  # littlefs: the board's
            places = [self.dirpath]
            parent = self.dirpath.rsplit("/", 1)[0] or "/"
            if parent != self.dirpath:
                try:  # the parent too, when it is on the same filesystem
                    there = os.statvfs(parent)
                    here = os.statvfs(self.dirpath)
                    if there[0] == here[0] and there[2] == here[2]:
                        places.append(parent)
                except OSError:  # (taken as another filesystem)
                    pass
            # In each, a small file is rewritten until the directory's metadata block has
            # compacted at least once (more bytes of commits than a block holds), then
            # removed. Best effort.
            pad = bytes(48)
            for path in places:
                target = path.rstrip("/") + "/settle.pad"
                try:
                    for _ in range(os.statvfs(path)[0] // 48 + 2):
                        with open(target, "wb") as f:
                            f.write(pad)
                except OSError:  # a full flash: the copies still work, only less protected
                    pass
                _remove(target)
        self._copies_made = True

    def _close_journals(self):
        self._b_behind = False  # (closed: committed, or the flash failed)
        for journal in (self._journal_a, self._journal_b):
            if journal is not None:
                _close(journal)
        self._journal_a = None
        self._journal_b = None


class _Compaction:
    """A compaction under way: what it writes (the game's buffers as they were when it
    began) and how far it got."""

    def __init__(self, header, parts, jheader):
        self.header = header
        self.jheader = jheader
        # The parts as the codec gave them: bytes, and views of the game's own chunks
        # (rules_core.snapshot.parts), whose bytes one change of the game leaves as they
        # were (an undo writes nothing, an event writes after them), and record()
        # finishes the compaction before the game changes again. (Were they changed, the
        # CRC of what was written would not be the header's: whole() says so and the
        # compaction begins again.) A bytearray is the codec's own buffer: copied, it is
        # short.
        sources: list = []
        for part in parts:
            sources.append(bytes(part) if type(part) is bytearray else part)
        self.sources = sources
        self.journals = []  # the copies' new journals, open
        self.file = None  # the history or snapshot being written
        self.copy = 0  # in _COPIES
        self.chunks = None  # the game's history's chunks, and how many go to game.his
        self.filed = 0
        self.stage = _HISTORY
        self.part = 0  # the next byte to write: part, offset in it
        self.offset = 0
        self.check = 0  # the CRC of what this copy's snapshot has been given so far

    def next_copy(self, has):
        """Start on the copy self.copy, whose game.his holds `has` chunks."""
        self.stage = _HISTORY if has < self.filed else _WRITE
        self.part = 0
        self.offset = 0

    def write_piece(self):
        """Up to _PIECE bytes more of the snapshot into self.file; True once all are."""
        room = _PIECE
        sources = self.sources
        while room and self.part < len(sources):
            buf = sources[self.part]
            n = len(buf)
            at = self.offset
            end = at + room if at + room < n else n
            if end > at:
                view = memoryview(buf)[at:end]
                self.file.write(view)
                self.check = crc32(view, self.check)
            room -= end - at
            if end >= n:
                self.part += 1
                self.offset = 0
            else:
                self.offset = end
        return self.part >= len(sources)

    def whole(self):
        """True if the snapshot written is the one its header's CRC describes."""
        return self.check == struct.unpack_from("<I", self.header, 20)[0]


def _close_all(files):
    for f in files:
        _close(f)


def _close(f):
    try:
        f.close()
    except OSError:  # the flash already failed; the next write starts afresh
        pass


def _remove(path):
    try:
        os.remove(path)
    except OSError:  # not there, or the flash fails: nothing more to do
        pass


# The modules that read a stored game back (journal_load, and the snapshot's reader it
# loads): a board drops them once its stores are read (firmware.startapp, or
# firmware.app's load; firmware.errors.forget).
READERS = ("boardlib.journal_load", "rules_core.resume")


def stores(data_dir):
    """The board's two stores, each with a GameNumbering of its own: the game's in
    `data_dir`, and the last game replaced while it had events, kept until the host has it
    all, in `data_dir`-kept. Neither is read yet (journal_load.read)."""
    return (GameStore(data_dir, codec=GameNumbering()),
            GameStore(data_dir.rstrip("/") + "-kept", codec=GameNumbering()))


class GameNumbering:
    """The stored-game codec: the game's identity and number in front of the snapshot.

    The identity is 8 random bytes made with the game (os.urandom), so no two games are
    ever taken for one, even when a re-flashed board numbers its games from 0 again; the
    number goes up by one for every new game, for people. Both travel in every game frame;
    keeping them in the snapshot means they survive a power cut with the game. Layout:
    b"ID", identity (8), number u16 LE, then rules_core.snapshot.pack(game). A game stored
    before identities (number u16, then the snapshot) gets a new identity when read."""

    def __init__(self):
        self.number = 0
        self.game_id = bytearray(8)

    def new_identity(self):
        import os  # (the os of now: the simulator's --seed puts a seeded one in its place)

        self.game_id[:] = os.urandom(8)

    def parts(self, game, filed=0):
        # in pieces, written one after the other: a long game needs no large block of heap
        # (filed: the history's chunks the store keeps in a file of its own)
        return (b"ID", self.game_id, struct.pack("<H", self.number)) + snapshot.parts(
            game, filed)

    def unpack(self, data, fill=None):
        if len(data) < 2:
            raise ValueError("stored game too short")
        from rules_core import resume  # read once, at boot: dropped with READERS

        at = 12 if bytes(data[0:2]) == b"ID" else 2  # an old game (game number 0x4449 ...
        game = resume.unpack(memoryview(data)[at:], fill)  # ... aside) has no identity
        self.number = struct.unpack_from("<H", data, at - 2)[0]
        if at == 2:
            self.new_identity()
        else:
            self.game_id[:] = data[2:10]
        return game
