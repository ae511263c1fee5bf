"""The heap a board has, on the unix port: everything but `budget` bytes taken by ballast.

    from tools.sim.board.heap import pin, largest_free
    ballast = pin(111936)     # now gc.mem_free() is the budget, in one piece
    largest_free(gc.mem_free())   # the largest block the firmware could still have
    ballast = None            # the whole heap again

On the ESP32 the heap holds only what the firmware allocates (and the modules it loads);
the unix port's heap also holds the simulator's own modules. Once they are loaded, a
ballast takes up everything beyond the budget, so what runs next has the heap a board
would give it: `budget` bytes, unfragmented, as a fresh heap. Used by the simulated board
(`--heap-budget`), by the bench's heap figures (tools/sim/board/heap_device.py) and by the
ESP32 twin when it plays the ESP32's heap (rom.py `--heap`).
"""

import gc
import sys


def pin(budget):
    """Leave exactly `budget` bytes free (rounded up to the heap's blocks: 16 bytes on 32
    bits, 32 on 64), in one piece; returns the ballast to keep while the budget applies.
    ValueError when the heap is too small for it.

    Every other free block of the heap is taken, down to the single blocks that loading
    and compiling code leave between objects. A ballast that left those (it once stopped
    at 2,047 pieces) gave the firmware several KB beyond its budget, in 16-byte holes,
    and how many depended on everything the unix port had done before, down to the
    length of the folder the tree was checked out in.

    The collector scans conservatively: any word anywhere in the heap (a buffer of flash
    data, a float's bits) that happens to equal the budget block's address keeps that
    block in use when it should be let go. Then that block stays where it is (the stray
    word holds it, not the budget) and another is tried at another address, a small
    spacer moving it."""
    want = (budget + BLOCK - 1) // BLOCK * BLOCK
    kept = []  # the spacers: out of the way for good
    for _ in range(4):
        gc.collect()
        if gc.mem_free() < want:
            raise ValueError("the heap is too small for the code plus a budget of %d bytes"
                             % budget)
        ballast = [None] * _SLOTS  # its last slot stays free: the spacers go there
        holder = [None, None]
        _hold(holder, want)
        _fill(ballast)
        holder[0] = holder[1] = None
        gc.collect()
        if gc.mem_free() < want:  # the budget's block is held by a stray word
            ballast = holder = None
            gc.collect()
            kept.append(bytearray(16 * (len(kept) + 1)))
            continue
        # What came free besides the budget (its bytearray's object, the small object
        # made last, the fill's own frame) was made before the budget's data or in
        # holes below it, and the allocator takes the lowest free block first (py/gc.c
        # gc_alloc): pairs take those blocks again, one each.
        chain = ballast[-2]
        while gc.mem_free() > want:
            chain = (chain, None)
            gc.collect()
        ballast[-2] = chain
        ballast[-1] = kept
        return ballast
    raise ValueError("could not set the heap budget")


# The heap's allocation unit (py/gc.c BYTES_PER_BLOCK: four machine words).
BLOCK = 16 if sys.maxsize < 1 << 32 else 32
_SLOTS = 2048  # the ballast's largest pieces, one a slot; the rest in a chain (_fill)


def _hold(holder, size):
    holder[0] = bytearray(size)
    # The collector scans the C stack conservatively: the address of the last object
    # made may linger there and keep it alive. Make that a small one, not the budget.
    holder[1] = (None, None)


def _fill(ballast):
    """Take every free block: bytearrays, largest first, one a slot of `ballast`, then
    in a chain of pairs at ballast[-2]; then pairs alone, a block each (four words),
    until the allocator finds no block even after a collection."""
    count = 0
    chain = None
    size = gc.mem_free()
    while size >= BLOCK:
        try:
            if count < _SLOTS - 2:
                ballast[count] = bytearray(size)
                count += 1
            else:
                chain = (chain, bytearray(size))
        except MemoryError:
            size //= 2
    while True:
        try:
            chain = (chain, None)
        except MemoryError:
            break
    ballast[-2] = chain


def own_qstr_pool(shared=True):
    """Start the pool the firmware's names (qstrs) go into, as the board's are, and return
    the bytes to take from the budget for them: the pool and the characters below.

    On a stock ESP32 the interpreter's own names and the frozen modules' are in flash; the
    first new name starts a pool of 20 entries in the GC heap, and each pool after it is
    twice the last (py/qstr.c `qstr_add`; tools/mpy-tool.py gives the frozen names' pool
    an allocation of at most 10 so that the first is small). The firmware's first 1,260
    names (BOARD_NAME_ROOM) fit pools of 20 to 640 entries, about 8.9 KB; the next name
    takes a pool of 1,280 entries, about 9 KB more, all at once. Here the simulator's own
    names have already made pools of their own, one part used: the firmware's first names
    would go into its free end, outside the budget, and how many depends on how many
    names the simulator has. So names of this module's own fill it until a pool is made
    that can hold the board's 1,260 (or as many more as the simulator's have made), and
    then that pool too, until `room` entries are left: the firmware's names run out of
    pool where the board's do (here the next pool is twice as large again: the twin fails
    there no later than the board would).

    Some of the firmware's names are the simulator's too (the board profile's, the
    display font's, words like `flash` or `status`): here they are interned already,
    outside the budget; the board interns them from its heap. So with `shared` (the twin)
    the room is BOARD_NAME_ROOM less SHARED_NAMES, and their characters,
    SHARED_NAME_CHARS, are taken from the budget too (`tests/test_twin.py` measures both
    and checks these are not smaller). Without (tools/sim/board/heap_device.py, which
    imports the firmware with none of the simulator's modules loaded) the room is
    BOARD_NAME_ROOM and the bytes are the pool's.

    The names' characters are kept apart from the pool, in chunks of 128 bytes or more
    (py/qstr.c, `qstr_from_strn_helper`), and the chunk in use is left full: on the ESP32
    the firmware's first new name takes a chunk of its own from the heap. Left part used,
    the firmware's first names would go into its free end, outside the budget, and how
    many bytes that is depends on the characters of the simulator's names, its modules'
    file names among them, so on the folder the tree was checked out in."""
    import gc

    room = BOARD_NAME_ROOM - (SHARED_NAMES if shared else 0)
    gc.collect()
    gc.disable()
    try:
        box = _Names()
        made = 0
        # (one gc.mem_free() a name, which walks the heap's whole table: the collector is
        # off, so what one name took is the last figure less this one)
        free = gc.mem_free()
        while True:
            getattr(box, "_q%d" % made, None)  # makes the name a qstr
            took = free - gc.mem_free()
            free -= took
            made += 1
            if took > _POOL_MIN:  # a pool (a string chunk takes 128 bytes)
                entries = _pool_entries(took)
                if entries > room:
                    break
        for i in range(entries - 1 - room):  # the new pool holds the name that made it
            getattr(box, "_q%d" % (made + i), None)
        _fill_name_chunk(box)
        return took + (SHARED_NAME_CHARS if shared else 0)
    finally:
        gc.enable()


def _pool_entries(took):
    """The entries of the pool that `took` bytes were taken for: one of 10 x 2**k (the
    pools double from the frozen names' 10, tools/mpy-tool.py), each entry a pointer, a
    2-byte hash and a 1-byte length after the pool's six words (py/qstr.h qstr_pool_t);
    `took` may hold a string chunk and the heap's rounding too."""
    word = 4 if sys.maxsize < 1 << 32 else 8
    guess = (took - 6 * word) / (word + 3)
    entries = 10
    while entries * 1.5 < guess:
        entries *= 2
    return entries


def _fill_name_chunk(box):
    """Leave the names' character chunk full. A name of _CHUNK - 1 characters (_CHUNK
    bytes with its terminator) fits no part-used chunk, whose free end is always shorter:
    the chunk grows by exactly that much where it lies, or is cut to what it holds and a
    chunk of exactly _CHUNK bytes is made for the name. Either way the chunk is full, but
    for what its heap blocks round it up by (under a block) when it grew."""
    getattr(box, "_" + "c" * (_CHUNK - 2), None)


class _Names:
    pass


_CHUNK = 128  # py/mpconfig.h MICROPY_ALLOC_QSTR_CHUNK_INIT


_POOL_MIN = 1024

# The names a stock ESP32 interns before its pool of 1,280 entries: pools of 20, 40, ...,
# 640 (own_qstr_pool).
BOARD_NAME_ROOM = 1260
# The firmware's names the twin has interned before it starts, and their characters with
# their terminators, that a board interns from its heap: measured by tests/test_twin.py
# (test_the_twin_charges_the_names_it_shares_with_the_firmware), which fails when the
# firmware shares more.
SHARED_NAMES = 150
SHARED_NAME_CHARS = 1024


def largest_free(free):
    """The largest bytearray that can be made now (at most `free` bytes): the heap's
    largest free block, less the few bytes of the array's own header and rounding."""
    low = 0
    high = free
    while high - low > 16:
        mid = (low + high) // 2
        try:
            bytearray(mid)
            low = mid
        except MemoryError:
            high = mid
    return low
