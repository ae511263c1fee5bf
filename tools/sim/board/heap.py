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


def own_qstr_pool():
    """Start the pool the next new names (qstrs) go into, and return the bytes it took.

    On the ESP32 the interpreter's own names and the frozen modules' are in pools that are
    full by construction (in flash), so the firmware's first new name starts a pool of its
    own, taken from the GC heap (py/qstr.c, `qstr_add`: each new pool twice the last). On
    the unix port the simulator's own modules leave a pool part used, and the firmware's
    first names would go into its free end, outside the budget, before a pool of twice its
    size is needed: how many depends on how many names the simulator has, so where the
    board runs out of memory would move with any change to it. Filled with names of its
    own until a new pool is made, the firmware starts on that pool, as on the board;
    `pin(budget - own_qstr_pool())` counts it in the budget.

    The names' characters are kept apart from the pool, in chunks of 128 bytes or more
    (py/qstr.c, `qstr_from_strn_helper`), and the chunk in use is left full: on the ESP32
    the firmware's first new name takes a chunk of its own from the heap. Left part used,
    the firmware's first names would go into its free end, outside the budget, and how
    many bytes that is depends on the characters of the simulator's names, its modules'
    file names among them, so on the folder the tree was checked out in."""
    import gc

    gc.collect()
    gc.disable()
    try:
        box = _Names()
        i = 0
        while True:
            name = "_q%d" % i
            free = gc.mem_free()
            getattr(box, name, None)  # makes the name a qstr
            took = free - gc.mem_free()
            if took > _POOL_MIN:  # a pool (a string chunk takes 128 bytes)
                _fill_name_chunk(box)
                return took
            i += 1
    finally:
        gc.enable()


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
