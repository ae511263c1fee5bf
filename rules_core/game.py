"""Game: the state of one game (or ceb match), its event history, undo and the board state.

    from rules_core import Game, GameError
    g = Game("ddbu", distance=(40, 30), sets=1, first=1)
    g.shot(pins=0b00101, carom=0, fouls=())   # bit0 = spot 1 ... bit4 = spot 5
    g.adjust(2, -4)                            # referee correction
    g.undo()                                   # back one event, exactly
    g.state()                                  # board state dict (CONTRACT section 3)
    g.state_json()                             # the same as one JSON line

The rules of each id live in ddbu.py, ceb.py and russian.py; this module holds what they
share. Every event is a 4-byte record (rules_core.events) appended to ``history``. Undo
restores the nearest checkpoint (a compact copy of the state taken every few events) and
replays the records after it, so undo costs the same on a long game as on a short one.

``history`` (a History) keeps the records and the checkpoints in chunks of one fixed size,
taken one at a time as the game goes on: a long game never asks the heap for a block
larger than a chunk (docs/performance.md). It reads as the bytes of its records:

    len(g.history) // 4                        # events (the board reads g.history.count)
    bytes(g.history), g.history.tobytes()      # the records, one after the other
    g.history[4:8], g.history.record(1)        # the second record
"""

# The builtins the event path calls, as this module's globals: MicroPython looks a name
# up in the module's globals first (to the table's first empty slot), then in the
# builtins' table, each time; a global is found at once (docs/performance.md).
from builtins import bytearray, bytes, len, max, type

from rules_core import savedstate
from rules_core.common import EventError, GameError
from rules_core.settings import RULES_IDS, RULES_TABLE, check_settings

try:
    from micropython import const
except ImportError:  # CPython: the integer itself
    const = int


def _scoring(rules_module):
    """The `shot` function of rules_core.<rules_module> (RULES_TABLE's second column),
    imported when a game of those rules is first made: a board holds only the rules it
    plays."""
    return __import__("rules_core." + rules_module, None, None, ("shot",)).shot


# The numbers of rules_core.common, events, savedstate and settings that this module reads,
# as constants of its own (an imported name is a lookup at every use and a slot in this
# module's globals; tests/test_rules_game.py checks them)
_PLAYING = const(0)
_BREAK = const(1)
_FINISHED = const(2)
_A_TWENTY = const(0x001)
_A_DISTANCE = const(0x004)
_A_BREAK = const(0x010)
_A_FINISHED = const(0x200)
_RECORD_SIZE = const(4)
_KIND_SHOT = const(1)
_KIND_ADJUST = const(2)
_MAX_OTHER = const(15)
_MAX_DELTA = const(32767)
_SAVE_SIZE = const(28)
_PAST = const(8)
_OPENING = const(16)

_MAX_COUNT = const(0xFFFF)
_CHECKPOINT_EVERY = const(32)
_RESERVE_EVENTS = const(32)  # reserve() keeps room for at least this many events
# A chunk of the history: the checkpoints of its events, then the events' records. 128
# events (docs/performance.md, "The history in chunks"): 4 checkpoints of SAVE_SIZE (28)
# bytes and 128 records of RECORD_SIZE (4) bytes, 624 bytes in all. Checkpoint k is of the
# state after event 32 k, so a chunk holds the checkpoints its own events are replayed from.
_CHUNK_EVENTS = const(128)
_CHUNK_SHIFT = const(7)  # events >> _CHUNK_SHIFT: the chunk of an event
_CHUNK_MARKS = const(4)  # _CHUNK_EVENTS // _CHECKPOINT_EVERY
_RECORDS_AT = const(112)  # _CHUNK_MARKS * SAVE_SIZE: where a chunk's records begin
_RECORD_BYTES = const(512)  # _CHUNK_EVENTS * RECORD_SIZE
_CHUNK_BYTES = const(624)  # _RECORDS_AT + _RECORD_BYTES
# Chunks made before any game needed them, taken before a new one is made: a board makes
# those its stored game will need at power-up, while its heap is still in large pieces
# (firmware.powerup); reading the game back leaves no free piece of 624 bytes in a
# stock ESP32's heap once the history is more than a few chunks long.
SPARE = []


def _as_record(record):
    try:
        return bytes(record)
    except TypeError:
        raise GameError("a record is bytes, got %r" % (record,)) from None


def _delta(record, at):
    """The checked player and delta of the adjust record at record[at:at + 4]."""
    player = record[at + 1]
    delta = record[at + 2] << 8 | record[at + 3]
    if delta & 0x8000:
        delta -= 0x10000
    if (player != 1 and player != 2) or delta == 0 or delta < -_MAX_DELTA:
        raise EventError("bad adjust record")
    return delta


def check_record(record, at):
    """The record at record[at:at + 4] checked as the game checks a record before it
    applies one (Game._run; events.decode checks the same): EventError if it would be
    refused. Also for a stored history read back (rules_core.resume), which then needs no
    decoder of its own at power-up."""
    kind = record[at]
    if kind == _KIND_SHOT:
        # (bit 7 of the second byte: the unset mark)
        if (record[at + 1] >> 5) & 3 > 2 or record[at + 3] > _MAX_OTHER:
            raise EventError("bad shot record")
    elif kind == _KIND_ADJUST:
        _delta(record, at)
    else:
        raise EventError("unknown record kind %d" % kind)


class History:
    """A game's event records and checkpoints, in chunks of _CHUNK_BYTES made one at a time
    (chunk i: the checkpoints of events 128 i to 128 i + 127, then their records). The
    game writes them (Game._keep, Game._mark) and never gives a chunk back: an undo only
    counts one event less, and the next event is written over it.

    For the board: ``count`` (the events), ``chunks``, ``each()`` (the records a chunk's
    run at a time, e.g. a CRC) and ``parts()`` (what a snapshot writes). For the host's
    tools it reads as the bytes of its records (len(), [], iteration; ``tobytes()``), each
    a copy."""

    def __init__(self):
        self.chunks = []
        self.count = 0

    def each(self, start, end, call, arg):
        """call(chunk, a, b, arg) over the records' bytes start..end (offsets as in
        tobytes()), a chunk at a time: chunk[a:b] is that run. Nothing is allocated:
        call may be boardlib.crc32.crc32_more, arg its register."""
        # (offsets from chunk i's first record: with no more locals than these, the
        # frame stays within what MicroPython keeps on the C stack, 11 words)
        i = start // _RECORD_BYTES
        start -= i * _RECORD_BYTES
        end -= i * _RECORD_BYTES
        while end > _RECORD_BYTES:  # runs to the end of their chunk
            call(self.chunks[i], _RECORDS_AT + start, _RECORDS_AT + _RECORD_BYTES, arg)
            i += 1
            start = 0
            end -= _RECORD_BYTES
        if start < end:
            call(self.chunks[i], _RECORDS_AT + start, _RECORDS_AT + end, arg)

    def parts(self, first=0):
        """The checkpoints (count // _CHECKPOINT_EVERY + 1 of them), then the records, as
        views of the chunks from chunk `first` on: what rules_core.snapshot.parts writes
        (the chunks before `first` go to a file of their own: boardlib.journal). Their
        bytes stay as they are until the game's next event (an undo changes none)."""
        out = []
        chunks = self.chunks
        left = (self.count // _CHECKPOINT_EVERY + 1) * _SAVE_SIZE - first * _RECORDS_AT
        i = first
        while left > 0 and i < len(chunks):
            out.append(memoryview(chunks[i])[:min(left, _RECORDS_AT)])
            left -= _RECORDS_AT
            i += 1
        left = (self.count - first * _CHUNK_EVENTS) * _RECORD_SIZE
        i = first
        while left > 0 and i < len(chunks):
            out.append(memoryview(chunks[i])[_RECORDS_AT:_RECORDS_AT + min(left, _RECORD_BYTES)])
            left -= _RECORD_BYTES
            i += 1
        return out

    def record(self, n):
        """Record n (from 0), a new bytearray."""
        at = _RECORDS_AT + (n & (_CHUNK_EVENTS - 1)) * _RECORD_SIZE
        return self.chunks[n >> _CHUNK_SHIFT][at:at + _RECORD_SIZE]

    def tobytes(self):
        """The records, one after the other (a copy)."""
        out = bytearray()
        # the parts after the checkpoints' (count // 32 + 1 checkpoints, 4 to a chunk)
        for part in self.parts()[self.count // _CHUNK_EVENTS + 1:]:
            out.extend(part)
        return bytes(out)

    def __len__(self):
        return self.count * _RECORD_SIZE

    def __getitem__(self, what):
        return self.tobytes()[what]


class Game:
    def __init__(self, rules, distance, sets=1, first=1, teams=0):
        if isinstance(distance, int):
            distance = (distance, distance)
        problem = check_settings(rules, distance, sets, first, teams)
        if problem:
            raise GameError(problem)
        d1, d2 = distance
        self.rules = rules
        self.rid = RULES_IDS.index(rules)
        # the rules mark a ball (ceb): marked() has an answer other than 0 (a plain
        # attribute, cheap to ask where the display draws the ring)
        self.marks_ball = bool(RULES_TABLE[self.rid][3] & _OPENING)
        self._rules_shot = _scoring(RULES_TABLE[self.rid][1])  # this game's rules' shot
        self.distance = [d1, d2]
        self.best_of = sets
        self.first = first
        self.teams = teams
        self.history = History()
        self.cuts = 0  # times the history was cut short (undo): it only grows in between
        # The state before the event being applied, to go back to if the rules refuse it:
        # made once, so that an event allocates nothing.
        self._before = bytearray(_SAVE_SIZE)
        # The state of a game not begun
        self.score = [0, 0]
        self.innings = [0, 0]
        self.innings[self.first - 1] = 1
        self.high = [0, 0]
        self.sets = [0, 0]
        self.shots = 0
        self.turn = self.first
        self.series = 0
        self.status = _PLAYING
        # status == FINISHED, kept beside it (a plain attribute: a class with a property
        # pays a lookup of its class at every attribute it stores, docs/performance.md)
        self.finished = False
        self.winner = 0
        self.last_player = 0  # 0: no shot yet
        self.last_points = 0
        self.last_to = 0
        self.last_foul = False
        self.announce = 0
        self.capped = False  # the last shot made more than the distance left (gain capped)
        self.last_series = 0
        # ceb teams: each team's player at the table (kept [1, 1] in singles).
        self.members = [1, 1]
        # Hidden: announced 20-remaining / distance (bit per player), break given,
        # caromboles in a row without a pin (ddbu), next shot opens a set (ceb).
        self.said_twenty = 0
        self.said_distance = 0
        self.break_done = False
        self.reds = 0
        self.opening = bool(RULES_TABLE[self.rid][3] & _OPENING)  # the rules' traits
        self._mark()

    # ----- state --------------------------------------------------------------------------

    def marked(self):
        """ceb: the player (team) with the marked ball in the current set, else 0.

        RULES.md section 2 (CEB 21.1): the player who did not open the current set. The
        opener of set k (from 0) is `first` in even sets (CEB 11.7: openings alternate);
        a finished match keeps the marking of its last set."""
        if not self.marks_ball:
            return 0
        current = self.sets[0] + self.sets[1]
        if self.status == _FINISHED:
            current -= 1
        opener = self.first if current % 2 == 0 else 3 - self.first
        return 3 - opener

    def _take(self, marks, records, first=0):
        """The checkpoints and the records of a saved game (views of its snapshot:
        rules_core.snapshot) from chunk `first` on, copied into the history's chunks, a
        chunk at a time (the chunks before `first` are made and filled already)."""
        i = 0
        while i * _RECORDS_AT < len(marks) or i * _RECORD_BYTES < len(records):
            chunk = self._chunk(first + i)
            part = marks[i * _RECORDS_AT:(i + 1) * _RECORDS_AT]
            chunk[:len(part)] = part
            part = records[i * _RECORD_BYTES:(i + 1) * _RECORD_BYTES]
            chunk[_RECORDS_AT:_RECORDS_AT + len(part)] = part
            i += 1
        self.history.count = first * _CHUNK_EVENTS + len(records) // _RECORD_SIZE

    def reserve(self):
        """Make room now for the next _RESERVE_EVENTS events and their checkpoint, so that
        applying them allocates nothing (the board calls this between shots): the next
        chunk of the history, when they would need it. The history grows a chunk at a
        time and never moves: no block of the heap larger than a chunk is ever asked for."""
        chunks = self.history.chunks
        if len(chunks) <= (self.history.count + _RESERVE_EVENTS) >> _CHUNK_SHIFT:
            chunks.append(SPARE.pop() if SPARE else bytearray(_CHUNK_BYTES))

    def _chunk(self, i):
        """Chunk i of the history, made now if it is the next one (reserve() was not
        called in time, or the game is being replayed without it)."""
        chunks = self.history.chunks
        if i == len(chunks):
            chunks.append(SPARE.pop() if SPARE else bytearray(_CHUNK_BYTES))
        return chunks[i]

    def _mark(self):
        """Write the checkpoint of the state as it is now (after event 32 k: checkpoint k)."""
        k = self.history.count // _CHECKPOINT_EVERY
        savedstate.save_into(self, self._chunk(k // _CHUNK_MARKS),
                             (k % _CHUNK_MARKS) * _SAVE_SIZE)

    def state(self):
        """The board state (CONTRACT section 3) plus "first", "best_of", "last_series"
        (rules_core.boardstate, imported here: a board asks for it only when its setup
        menu opens, so that it does not hold that code while it plays)."""
        # (relative: the module's full name is made when it is imported, not kept by every
        # board as a name of this code)
        from .boardstate import state

        return state(self)

    def state_json(self):
        # Imported here: the firmware never calls this (the host tools and the simulator
        # do), so a board never loads rules_core.jsonout.
        # (relative: the module's full name is made when it is imported, not kept by every
        # board as a name of this code)
        from .jsonout import state_json

        return state_json(self.state())

    # ----- events -------------------------------------------------------------------------

    def shot(self, pins=0, carom=0, fouls=(), unset=False):
        """Commit one shot: pins bitmask, carom 0/1/2, foul codes (see events); `unset`
        marks a shot begun before the pins were all set (kept, never scored).
        Returns the record applied (what a journal stores)."""
        # (imported here: a board applies records it makes itself, and need not hold the
        # encoders; relative, as state() below)
        from .events import encode_shot

        record = encode_shot(pins, carom, fouls, unset)
        self.apply(record)
        return record

    def adjust(self, player, delta):
        """Referee correction: add delta to player's score (see docs/rules.md).
        Returns the record applied."""
        from .events import encode_adjust  # (as in shot())

        record = encode_adjust(player, delta)
        self.apply(record)
        return record

    def apply(self, record):
        """Apply one encoded record (as the journal replays them) and keep it in history.
        A bytes or bytearray record costs no allocation: the board applies its events
        this way. The rules check the record before they change anything; an event that
        would take a count past the board's limits is taken back from the last
        checkpoint (rare: no copy of the state is made for it at every event)."""
        if type(record) is not bytearray and type(record) is not bytes:  # (the board's first)
            record = _as_record(record)
        if len(record) != _RECORD_SIZE:
            raise GameError("a record is %d bytes, got %d" % (_RECORD_SIZE, len(record)))
        if self.finished:
            raise GameError("the game is finished: only undo is accepted")
        n = self.history.count
        if n >= _MAX_COUNT:
            raise GameError("the game has reached the board's limit of %d events" % _MAX_COUNT)
        self._run(record, 0)
        # (The board's limits and the record kept, here rather than in calls of their own:
        # a call costs as much as a dozen attribute reads, and this runs at every event.)
        if (max(self.score[0], self.score[1], self.high[0], self.high[1]) > _MAX_COUNT
                or max(self.innings[0], self.innings[1], self.series, self.shots,
                       self.last_points) > _MAX_COUNT):
            self._restore(n)
            raise GameError("the game has reached the board's limit of %d" % _MAX_COUNT)
        # The record just applied is event n (from 0), and every _CHECKPOINT_EVERY events
        # a checkpoint is written. Byte by byte: a slice would be an object made per event.
        chunk = self.history.chunks
        at = n >> _CHUNK_SHIFT
        if at == len(chunk):
            chunk.append(SPARE.pop() if SPARE else bytearray(_CHUNK_BYTES))
        chunk = chunk[at]
        at = _RECORDS_AT + (n & (_CHUNK_EVENTS - 1)) * _RECORD_SIZE
        chunk[at] = record[0]
        chunk[at + 1] = record[1]
        chunk[at + 2] = record[2]
        chunk[at + 3] = record[3]
        n += 1
        self.history.count = n
        if n % _CHECKPOINT_EVERY == 0:
            self._mark()

    def undo(self):
        """Take back the last shot or adjust; the state is exactly what it was before it."""
        history = self.history
        n = history.count
        if n == 0:
            raise GameError("nothing to undo")
        before = self._before
        savedstate.save_into(self, before)
        try:
            self._restore(n - 1)
        except Exception as e:  # noqa: BLE001 - any damage must leave the game usable
            # Only a damaged resume can get here: keep the game as it was and say so.
            savedstate.load(self, before)
            raise GameError("cannot undo: the stored history is damaged (%s)" % e) from None
        # Cut short: the event's record and a checkpoint after it stay in their chunk
        # until the next event is written over them (and a snapshot begun before stays
        # whole: docs/persistence.md).
        history.count = n - 1
        self.cuts += 1

    def _restore(self, count):
        """The state after the first `count` events of the history: their checkpoint,
        then the events after it applied again."""
        mark = count // _CHECKPOINT_EVERY
        chunk = self.history.chunks[mark // _CHUNK_MARKS]  # its events are there too
        first = mark % _CHUNK_MARKS
        savedstate.load(self, chunk, False, first * _SAVE_SIZE)
        at = _RECORDS_AT + first * (_CHECKPOINT_EVERY * _RECORD_SIZE)
        for _ in range(count - mark * _CHECKPOINT_EVERY):
            self._run(chunk, at)
            at += _RECORD_SIZE

    def _run(self, record, at):
        """Apply the record at record[at:at + 4]: checked first (check_record, as a stored
        history is checked when it is read back; an adjust as the rules take it), before
        anything changes; then the rules of the game's id (nothing allocated)."""
        check_record(record, at)
        if record[at] == _KIND_SHOT:
            self.announce = 0  # (as _adjust begins)
            self.capped = False
            if self.status == _BREAK:
                self.status = _PLAYING  # play resumes after the break
            self.shots += 1
            self._rules_shot(self, record, at)
        else:
            self._adjust(record[at + 1], _delta(record, at))

    def _adjust(self, player, delta):
        i = player - 1
        new = self.score[i] + delta
        if new < 0:
            raise GameError("adjust would take player %d below 0 (score %d)"
                            % (player, self.score[i]))
        if not RULES_TABLE[self.rid][3] & _PAST:
            if self.score[i] >= self.distance[i]:
                raise GameError("player %d is at the distance: take the shot back with undo"
                                % player)
            if new >= self.distance[i]:
                raise GameError("an adjust cannot reach the distance (%d for player %d): "
                                "the distance is reached by play" % (self.distance[i], player))
        self.announce = 0
        self.capped = False
        if self.status == _BREAK:
            self.status = _PLAYING  # play resumes after the break
        self.score[i] = new

    # ----- helpers for the rules modules --------------------------------------------------

    def gain(self, player, points, cap):
        """Add points to player's score (capped at the distance if cap); returns them."""
        i = player - 1
        if cap:
            room = self.distance[i] - self.score[i]
            if points > room:
                points = room
                self.capped = True
        self.score[i] += points
        if not points:
            return points
        # Seed 000 13.3: "20 remaining" once, "distance reached" once. A shot that jumps from
        # more than 20 to the distance announces only the distance. (Here, not in a call
        # of its own: a call costs a dozen reads. `player` is the player's bit, `cap` the
        # points left.)
        player = 1 << i
        cap = self.distance[i] - self.score[i]
        if cap <= 0:
            if not self.said_distance & player:
                self.said_distance |= player
                self.said_twenty |= player
                self.announce |= _A_DISTANCE << i
        elif cap <= 20 and not self.said_twenty & player:
            self.said_twenty |= player
            self.announce |= _A_TWENTY << i
        return points

    def set_last(self, player, points, to, foul):
        self.last_player = player
        self.last_points = points
        self.last_to = to
        self.last_foul = foul

    def add_series(self, player, points):
        self.series += points
        if self.series > self.high[player - 1]:
            self.high[player - 1] = self.series

    def next_turn(self):
        """The turn passes: the opponent begins a turn (a series, or in ceb one shot)."""
        self.turn = 3 - self.turn
        self.innings[self.turn - 1] += 1
        self.series = 0
        self.reds = 0

    def finish(self, winner):
        self.status = _FINISHED
        self.finished = True
        self.winner = winner
        self.last_series = 0
        self.announce |= _A_FINISHED

    def start_break(self):
        self.break_done = True
        self.status = _BREAK
        self.announce |= _A_BREAK

