"""A power cut at every flash write of a recorded game (tests/test_powercut.py).

MicroPython only: the game goes through boardlib.journal onto littlefs (os.VfsLfs2) over a
RAM flash that logs every program and erase; CPython has no littlefs. The events come as
hex records or "undo"; each state is reported as a CRC-32 fingerprint of its JSON and
history, which the host compares with its own reference.
"""

import binascii
import io
import os

from boardlib import journal_load
from boardlib.journal import UNDO_RECORD, GameStore
from rules_core import Game
from tools.sim.board.flash import RamBlockDev, mount

HEAPSIZE = "32M"


def key(game):
    if game is None:
        return "none"
    h = binascii.crc32(game.state_json().encode() + b"|" + game.history.tobytes())
    return "%08x" % h


def step(game, rec):
    if rec == UNDO_RECORD:
        game.undo()
    else:
        game.apply(rec)


class Recorder:
    """Plays the events onto a flash and resumes from images of it."""

    def __init__(self, events, blocks):
        self.events = [UNDO_RECORD if x == "undo" else binascii.unhexlify(x) for x in events]
        self.blocks = blocks
        self.ref = []  # key after new_game and after each event, as played here

    def play(self, dev, count=None, upkeep=True):
        """new_game, then the events; returns the log length after each (new_game first).

        upkeep: True, maintain() after each event; False, none (record() compacts); "pieces",
        a compaction in pieces (maintain_piece) as the board's loop does, 0 to 4 pieces
        between two events, so that events also come while one is under way."""
        ends = []
        mount(dev, "/f")
        store = journal_load.store("/f")
        game = Game("ddbu", distance=(500, 480), sets=1, first=1)
        try:
            store.new_game(game)
            ends.append(len(dev.log) if dev.log is not None else dev.writes)
            self.ref.append(key(game))
            for i, rec in enumerate(self.events[:count]):
                if upkeep == "pieces":
                    # (these belong to the event before: its record() had returned)
                    for _ in range(i % 5):
                        store.maintain_piece()
                step(game, rec)
                store.record(game, rec)
                if upkeep is True:
                    store.maintain()  # as the application does between shots
                ends.append(len(dev.log) if dev.log is not None else dev.writes)
                self.ref.append(key(game))
        except OSError:
            ends.append(-1)  # the power went
        store.close()
        os.umount("/f")
        return ends

    def resume(self, dev, more=0, start=None):
        """Mount the device (a copy of the flash) and load; with more, record further
        events, reload.

        Returns (keys, status): the loaded game's key, and with more also the reloaded
        game's, the played game's and the reference after those events."""
        mount(dev, "/c", format_blank=False)
        store = GameStore("/c")
        try:
            game, status = journal_load.load(store)
            out = [key(game)]
            if more and game is not None:
                # go on from wherever the resume stands: after start - 1 events or start
                t = start - 1 if self.ref[start - 1] == out[0] else start
                more = min(more, len(self.events) - t)  # a cut near the end: what is left
                for rec in self.events[t:t + more]:
                    step(game, rec)
                    store.record(game, rec)
                store.close()
                second = GameStore("/c")
                again, _ = journal_load.load(second)
                second.close()
                out += [key(again), key(game), self.ref[t + more]]
        finally:
            store.close()
            os.umount("/c")
        return out, status


class CutFlash(RamBlockDev):
    """The flash as it stood when the power went, over `base` (the flash after every
    earlier operation), which it reads and never changes: the blocks written here are kept
    apart. Each cut costs what its own writes touch, not a copy of the whole 1.5 MB (whose
    copies kept the collector busy for most of the sweep's time)."""

    def __init__(self, base):
        self._init_counters(base.block_size, base.blocks, None, False, False)
        self._stream = base._stream  # read where no block of its own is kept
        self._own = {}  # block number -> a stream of that block's bytes as changed here

    def readblocks(self, block, buf, offset=0):
        # littlefs reads inside one block, hundreds of times a load: the short way there
        if not (0 <= block < self.blocks and 0 <= offset
                and offset + len(buf) <= self.block_size):
            return RamBlockDev.readblocks(self, block, buf, offset)
        own = self._own.get(block)
        if own is None:
            own = self._stream
            offset += block * self.block_size
        own.seek(offset)
        if own.readinto(buf) != len(buf):
            raise OSError(5)

    def _read(self, addr, buf):
        size = self.block_size
        block = addr // size
        if addr + len(buf) > (block + 1) * size:  # across blocks: one block at a time
            view = memoryview(buf)
            first = (block + 1) * size - addr
            self._read(addr, view[:first])
            self._read(addr + first, view[first:])
            return
        own = self._own.get(block)
        stream = self._stream if own is None else own
        stream.seek(addr if own is None else addr - block * size)
        if stream.readinto(buf) != len(buf):
            raise OSError(5)

    def _write(self, addr, data):
        size = self.block_size
        block = addr // size
        if addr + len(data) > (block + 1) * size:
            first = (block + 1) * size - addr
            self._write(addr, data[:first])
            self._write(addr + first, data[first:])
            return
        own = self._own.get(block)
        if own is None:
            whole = bytearray(size)
            RamBlockDev._read(self, block * size, whole)
            own = self._own[block] = io.BytesIO(whole)
        own.seek(addr - block * size)
        own.write(data)


def sweep(events, blocks, upkeep=True):
    """Rebuild the flash as it stood after every operation (and a torn half of every
    program) and resume from it. Returns (operations, ends, cuts) with a cut
    (op, torn, events done, status, keys) or (op, torn, done, "raised", repr).
    upkeep: as Recorder.play's."""
    rec = Recorder(events, blocks)
    dev = RamBlockDev(4096, blocks, record=True)
    mount(dev, "/f")
    os.umount("/f")
    formatted = bytes(dev.data)
    dev.log = []
    ends = rec.play(dev, upkeep=upkeep)
    log = dev.log
    cuts = []
    work = RamBlockDev(4096, blocks, image=formatted)
    done = 0  # events (new_game first) whose writes all came before op j
    for j in range(len(log)):
        while done < len(ends) and ends[done] <= j:
            done += 1
        entry = log[j]
        variants = (False, True) if entry[1] >= 0 else (False,)
        for torn in variants:
            scratch = CutFlash(work)
            scratch.apply(entry, torn)
            # every 40th cut also goes on playing after the resume
            more = 3 if j % 40 == 0 else 0
            try:
                out, status = rec.resume(scratch, more, done)
                cuts.append((j, int(torn), done, status, out))
            except Exception as e:
                cuts.append((j, int(torn), done, "raised", repr(e)))
        work.apply(entry)
    return len(log), ends, cuts


def real_cuts(events, picks, blocks):
    """The device itself stops after write n (torn or not), for each "<n>f" or "<n>t" of
    picks: (n, torn, events done, status, key, last end) each, the same as a rebuilt image."""
    rec = Recorder(events, blocks)
    out = []
    for arg in picks:
        n, torn = int(arg[:-1]), arg[-1] == "t"
        dev = RamBlockDev(4096, blocks)
        mount(dev, "/f")
        os.umount("/f")
        base = dev.writes
        dev.cut_after_writes = base + n
        dev.torn = torn
        dev.log = None
        ends = rec.play(dev, upkeep=False)  # compaction inside record() this time
        done = 0
        while done < len(ends) and 0 <= ends[done] - base < n:
            done += 1
        keys, status = rec.resume(RamBlockDev(4096, blocks, image=dev.data))
        out.append((n, int(torn), done, status, keys[0], ends[-1]))
    return out
