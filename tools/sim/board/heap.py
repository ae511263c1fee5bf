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


def pin(budget):
    """Leave exactly `budget` bytes free, in one piece; returns the ballast to keep while
    the budget applies (pin_heap, then release_budget). ValueError when the heap is too
    small for it.

    The collector scans conservatively: any word anywhere in the heap (a buffer of flash
    data, a float's bits) that happens to equal the budget block's address keeps that
    block in use when it should be let go. Then that block stays where it is (the stray
    word holds it, not the budget) and another is tried at another address, a small
    spacer moving it."""
    kept = []  # the spacers: out of the way for good
    for _ in range(4):
        ballast, holder = pin_heap(budget)
        try:
            release_budget(holder, budget)
        except ValueError:
            ballast = holder = None
            gc.collect()
            kept.append(bytearray(16 * (len(kept) + 1)))
            continue
        ballast[-1] = kept  # (its last slot is left for this: nothing new is made now)
        return ballast
    raise ValueError("could not set the heap budget")


def pin_heap(budget):
    """Leave exactly `budget` bytes of heap free, held as one block for now (release it
    with release_budget). Raises ValueError if the heap has less."""
    gc.collect()
    if gc.mem_free() < budget:
        raise ValueError("the heap is too small for the code plus a budget of %d bytes"
                         % budget)
    # Hold the budget as one block, fill every other free piece with ballast, then let
    # the budget go: what is left is the budget, in one piece.
    holder = [None, None]
    _hold(holder, budget - 64)
    return _fill(), holder


def release_budget(holder, budget):
    """Second half of pin_heap: free the held budget and check that it is free."""
    holder[0] = holder[1] = None
    gc.collect()
    if gc.mem_free() < budget - 256:
        raise ValueError("could not set the heap budget")


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
    `pin(budget - own_qstr_pool())` counts it in the budget."""
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
                return took
            i += 1
    finally:
        gc.enable()


class _Names:
    pass


_POOL_MIN = 1024


def _hold(holder, size):
    holder[0] = bytearray(size)
    # The collector scans the C stack conservatively: the address of the last object
    # made may linger there and keep it alive. Make that a small one, not the budget.
    holder[1] = bytearray(16)


def _fill():
    blocks = [None] * 2048  # the last slot stays free: pin keeps its spacers there
    count = 0
    size = gc.mem_free()
    while size >= 16 and count < len(blocks) - 1:
        try:
            blocks[count] = bytearray(size)
            count += 1
        except MemoryError:
            size //= 2
    return blocks


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
