"""The game on flash: a snapshot plus an append-only journal, safe against power cuts.

    from boardlib.journal import GameStore, OK, TRUNCATED, NONE, CORRUPT
    store = GameStore("/flash")
    game, status = store.load()          # at boot: the game as it was, or None
    if game is None:
        game = Game("ddbu", distance=(40, 40))
        store.new_game(game)             # settings (and any state) as a fresh snapshot
    rec = events.encode_shot(pins, carom, fouls)
    game.apply(rec)
    store.record(game, rec)              # on flash before the display shows the shot
    game.undo()
    store.record_undo(game)              # undo is an event of its own in the journal
    store.maintain()                     # between shots: compact if the journal is full

Files in the directory (all small, every one checked with a CRC-32):

- `game.snp`  snapshot: magic, generation, length, CRC, `rules_core.snapshot.pack(game)`.
- `game.jrn`  journal: magic and the generation of the snapshot it follows, then one frame
  per event: length byte, the event record exactly as the game applied it, CRC-32 of
  both salted with the generation and the frame's number (a frame from an older journal,
  or repeated, never passes).
- `game.tmp`  a snapshot being written; `game.bak` the snapshot before the last one;
  `game.bad`  a journal whose tail was dropped, kept for inspection.

Compaction (by `maintain()` between shots once the journal is full, or by `record()` if
an event finds it full) writes the next generation's
snapshot to `game.tmp`, renames `game.snp` to `game.bak` and `game.tmp` to `game.snp`, then
starts an empty journal of the new generation. `load()` takes the valid snapshot with the
highest generation and replays the journal only if it belongs to it, so a power cut at any
point leaves either the old or the new state. The journal stays within littlefs's inline
file size (it lives in the directory's metadata log), so an append erases no data block:
see docs/persistence.md for the numbers.
"""

import os
import struct

try:
    from binascii import crc32
except ImportError:  # a build without binascii.crc32: slow but the same result

    def crc32(data, crc=0):
        crc ^= 0xFFFFFFFF
        for byte in data:
            crc ^= byte
            for _ in range(8):
                crc = (crc >> 1) ^ (0xEDB88320 if crc & 1 else 0)
        return crc ^ 0xFFFFFFFF


try:
    from micropython import const
except ImportError:  # CPython: the integer itself
    const = int


OK = 0  # the game was read back whole (or there was nothing irregular to repair)
NONE = 1  # no game stored
TRUNCATED = 2  # a corrupt or cut-off part was dropped: the longest valid prefix
CORRUPT = 3  # files were there but no game could be read back from them

# The journal's record for an undo (the game's own records are shots and adjusts; kind 0
# is none of them): replaying it calls game.undo().
UNDO_RECORD = b"\x00\x00\x00\x00"

_SNAP_MAGIC = b"PBS1"
_JOURNAL_MAGIC = b"PBJ1"
_SNAP_HEADER = const(16)  # magic, generation, payload length, CRC-32
_JOURNAL_HEADER = const(8)  # magic, generation
_FRAME_EXTRA = const(5)  # length byte + CRC-32
_MAX_RECORD = const(64)
# littlefs keeps a file of up to cache_size bytes (128 with VfsLfs2's defaults) inline in
# the directory's metadata: appending to it costs no block erase. Past that, every flushed
# append copies the file's last block to a freshly erased one.
_JOURNAL_LIMIT = const(112)
# A 1000-shot game packs into about 5 KB; a file claiming far more than any game is damage.
_MAX_FILE = const(65536)

_SNP = "game.snp"
_TMP = "game.tmp"
_BAK = "game.bak"
_JRN = "game.jrn"
_BAD = "game.bad"


def _default_codec():
    from rules_core import snapshot

    return snapshot


class GameStore:
    """The stored game in directory `dirpath` (an already mounted filesystem)."""

    # The statuses of load(), also here so a caller needs only the class.
    OK = 0
    NONE = 1
    TRUNCATED = 2
    CORRUPT = 3

    def __init__(self, dirpath, journal_limit=_JOURNAL_LIMIT, codec=None):
        self.dirpath = dirpath
        self.journal_limit = journal_limit
        # codec: pack(game) -> bytes and unpack(bytes) -> game; rules_core.snapshot unless
        # a caller stores something else the same way.
        self._codec = codec
        self.generation = 0
        self._snp_exists = None  # whether game.snp is on flash; None: not known yet
        self.records = 0  # frames in the current journal
        self._journal = None
        self._journal_bytes = 0
        self._needs_snapshot = True  # no journal to append to yet
        self._frames = {}  # record length -> preallocated frame buffer
        self._game = None  # the game last stored, for maintain()
        self._last_frame = _FRAME_EXTRA + 4  # size of the last frame appended
        # Generation and frame number: every frame's CRC starts from them, so a frame
        # from another journal or from another place in this one never passes.
        self._salt = bytearray(8)
        try:
            os.mkdir(dirpath)
        except OSError:  # already there (the usual case)
            pass

    def _path(self, name):
        return self.dirpath.rstrip("/") + "/" + name

    def _pack(self, game):
        if self._codec is None:
            self._codec = _default_codec()
        return self._codec.pack(game)

    def _unpack(self, data):
        if self._codec is None:
            self._codec = _default_codec()
        return self._codec.unpack(data)

    # ---- boot --------------------------------------------------------------------------

    def load(self):
        """Read the stored game back: (game or None, status). Never raises on bad data."""
        self._close_journal()
        found_any = False
        status = OK
        candidates = []
        self._snp_exists = False
        for name in (_SNP, _TMP, _BAK):
            data = _read_file(self._path(name))
            if data is None:
                continue
            if name == _SNP:
                self._snp_exists = True
            # A temporary file alone is a snapshot whose writing the power cut short.
            found_any = found_any or name != _TMP
            gen, payload = _parse_snapshot(data)
            if payload is None:
                if name == _SNP:
                    status = TRUNCATED  # the current snapshot is damaged: fall back
                continue
            candidates.append((gen, name, payload))
        journal = _read_file(self._path(_JRN))
        if journal is not None and not journal:
            journal = None  # created, and the power went before its header was written
        found_any = found_any or journal is not None
        highest = 0
        for gen, _, _ in candidates:
            highest = max(highest, gen)
        journal_gen = _journal_generation(journal)
        if journal_gen is not None:
            highest = max(highest, journal_gen)
        self.generation = highest

        game = None
        base_gen = 0
        base_name = None
        # Best first: the highest generation that unpacks into a game.
        candidates.sort(key=lambda c: -c[0])
        for gen, name, payload in candidates:
            try:
                game = self._unpack(payload)
            except MemoryError:
                raise  # not bad data: the game on flash is fine and must not be replaced
            except Exception:  # any rejection by the codec means this copy is unusable
                status = TRUNCATED
                continue
            base_gen, base_name = gen, name
            break
        if game is None:
            self._needs_snapshot = True
            return None, (CORRUPT if found_any else NONE)

        regular = base_name == _SNP and journal_gen == base_gen
        if journal is not None and journal_gen is None:
            status = TRUNCATED  # the journal's header is damaged: its events are lost
        elif journal_gen is not None and journal_gen > base_gen:
            status = TRUNCATED  # the journal follows a snapshot that could not be read
        elif journal_gen == base_gen:
            applied, clean = _replay(game, journal, base_gen)
            self.records = applied
            if not clean:
                status = TRUNCATED
                regular = False
                self._keep_bad_journal()
        self._game = game
        if regular and _read_file(self._path(_TMP)) is None:
            self._open_journal(len(journal))
        else:
            # Anything irregular (an interrupted compaction, a dropped tail) is settled
            # now with a fresh snapshot, so appends never follow damaged data.
            self._needs_snapshot = True
            self._try_compact(game)
        return game, status

    # ---- writing -----------------------------------------------------------------------

    def new_game(self, game):
        """Store `game` (usually just set up) as the only game: a fresh snapshot."""
        self.compact(game)

    def record(self, game, record):
        """Append `record`, the event `game` has just applied, and flush it to flash.

        Raises TypeError or ValueError (writing nothing) for a record it cannot frame, and
        OSError when the flash fails. Either way the next record() or maintain() writes a
        whole snapshot of the game, so the flash never misses an event the game has.
        """
        if not isinstance(record, (bytes, bytearray)):
            self._needs_snapshot = True
            raise TypeError("record must be bytes, not %s" % type(record).__name__)
        size = len(record)
        if size < 1 or size > _MAX_RECORD:
            self._needs_snapshot = True
            raise ValueError("record of %d bytes (1..%d)" % (size, _MAX_RECORD))
        frame_size = size + _FRAME_EXTRA
        self._game = game
        if self._needs_snapshot or self._journal_bytes + frame_size > self.journal_limit:
            self.compact(game)  # maintain() was not called in time: compact now
            return
        buffers = self._frames.get(size)
        if buffers is None:
            frame = bytearray(frame_size)
            frame[0] = size
            buffers = (frame, memoryview(frame)[0: 1 + size])
            self._frames[size] = buffers
        frame, covered = buffers
        frame[1: 1 + size] = record
        salt = self._salt
        struct.pack_into("<I", salt, 4, self.records)
        struct.pack_into("<I", frame, 1 + size, crc32(covered, crc32(salt)))
        try:
            self._journal.write(frame)
            self._journal.flush()
        except OSError:
            self._needs_snapshot = True
            self._close_journal()
            raise
        self._journal_bytes += frame_size
        self.records += 1
        self._last_frame = frame_size

    def maintain(self):
        """Compact if the journal cannot take another event; call it while no shot is in
        progress, so that a scored shot costs only its small append. Returns True if it
        wrote a snapshot. A flash failure is kept for the next record() to retry."""
        game = self._game
        if game is None:
            return False
        if not self._needs_snapshot and (
            self._journal_bytes + self._last_frame <= self.journal_limit
        ):
            return False
        try:
            self.compact(game)
        except OSError:  # the flash failed: record() retries the snapshot
            return False
        return True

    def record_undo(self, game):
        """Append an undo that `game` has just done (the same as record(game, UNDO_RECORD))."""
        self.record(game, UNDO_RECORD)

    def compact(self, game):
        """Write `game` as the next generation's snapshot and start an empty journal."""
        self._close_journal()
        self._needs_snapshot = True
        self._game = game
        payload = self._pack(game)
        if not self.generation:
            # Not loaded first: step past whatever is stored, so that no journal left
            # from an earlier game can ever pass for this game's.
            self.generation = self._highest_stored_generation()
        gen = self.generation + 1
        header = bytearray(_SNAP_HEADER)
        header[0:4] = _SNAP_MAGIC
        struct.pack_into("<II", header, 4, gen, len(payload))
        struct.pack_into("<I", header, 12, crc32(payload, crc32(header[4:12])))
        tmp = self._path(_TMP)
        with open(tmp, "wb") as f:
            f.write(header)
            f.write(payload)
        if self._snp_exists is None:  # not loaded first: look (load() knows already)
            self._snp_exists = _exists(self._path(_SNP))
        if self._snp_exists:
            os.rename(self._path(_SNP), self._path(_BAK))
        os.rename(tmp, self._path(_SNP))
        self._snp_exists = True
        self.generation = gen
        # From here a power cut resumes from the new snapshot: the old journal's generation
        # no longer matches it, so its events (all in the snapshot) are not applied twice.
        jheader = bytearray(_JOURNAL_HEADER)
        jheader[0:4] = _JOURNAL_MAGIC
        struct.pack_into("<I", jheader, 4, gen)
        with open(self._path(_JRN), "wb") as f:
            f.write(jheader)
        self.records = 0
        self._open_journal(_JOURNAL_HEADER)

    def close(self):
        self._close_journal()

    # ---- internals ---------------------------------------------------------------------

    def _try_compact(self, game):
        try:
            self.compact(game)
        except OSError:  # flash trouble at boot: keep the game; the next record retries
            self._needs_snapshot = True

    def _open_journal(self, size):
        self._journal = open(self._path(_JRN), "ab")
        self._journal_bytes = size
        struct.pack_into("<I", self._salt, 0, self.generation)
        self._needs_snapshot = False

    def _close_journal(self):
        if self._journal is not None:
            try:
                self._journal.close()
            except OSError:  # the flash already failed; the next write starts afresh
                pass
            self._journal = None

    def _keep_bad_journal(self):
        try:
            os.rename(self._path(_JRN), self._path(_BAD))
        except OSError:  # only a copy for inspection
            pass

    def _highest_stored_generation(self):
        highest = 0
        for name in (_SNP, _TMP, _BAK, _JRN):
            data = _read_file(self._path(name), 8)
            if data is not None and len(data) >= 8:
                highest = max(highest, struct.unpack_from("<I", data, 4)[0])
        return highest


def _exists(path):
    try:
        os.stat(path)
        return True
    except OSError:
        return False


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


def _parse_snapshot(data):
    """(generation, payload) of a valid snapshot file, else (0, None)."""
    if len(data) < _SNAP_HEADER or len(data) > _MAX_FILE or data[0:4] != _SNAP_MAGIC:
        return 0, None
    gen, length, crc = struct.unpack_from("<III", data, 4)
    if len(data) != _SNAP_HEADER + length:
        return 0, None
    payload = memoryview(data)[_SNAP_HEADER:]  # no copy of a long game's history
    if crc32(payload, crc32(data[4:12])) != crc:
        return 0, None
    return gen, payload


def _journal_generation(data):
    if data is None or len(data) < _JOURNAL_HEADER or data[0:4] != _JOURNAL_MAGIC:
        return None
    return struct.unpack_from("<I", data, 4)[0]




def _replay(game, journal, gen):
    """Apply the journal's valid frames to `game`: (frames applied, whole journal valid)."""
    salt = bytearray(8)
    struct.pack_into("<I", salt, 0, gen)
    pos = _JOURNAL_HEADER
    applied = 0
    end = len(journal)
    while pos < end:
        size = journal[pos]
        stop = pos + 1 + size + 4
        if size < 1 or size > _MAX_RECORD or stop > end:
            return applied, False
        struct.pack_into("<I", salt, 4, applied)
        if crc32(journal[pos: pos + 1 + size], crc32(salt)) != struct.unpack_from(
            "<I", journal, pos + 1 + size
        )[0]:
            return applied, False
        record = journal[pos + 1: pos + 1 + size]
        try:
            if record == UNDO_RECORD:
                game.undo()
            else:
                game.apply(record)
        except MemoryError:
            raise  # not bad data: better a reset and another try than a shortened game
        except Exception:  # a record the game refuses: the rest cannot follow from it
            return applied, False
        applied += 1
        pos = stop
    return applied, True
