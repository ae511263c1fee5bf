"""The heap a board has, on the unix port: everything but `budget` bytes taken by ballast.

    from tools.simboard.heap import pin
    ballast = pin(111936)     # now gc.mem_free() is the budget, in one piece
    ballast = None            # the whole heap again

On the ESP32 the heap holds only what the firmware allocates (and the modules it loads);
the unix port's heap also holds the simulator's own modules. Once they are loaded, a
ballast takes up everything beyond the budget, so what runs next has the heap a board
would give it: `budget` bytes, unfragmented, as a fresh heap. Used by the simulated board
(`--heap-budget`) and by the ESP32 twin when it plays the ESP32's heap (rom.py `--heap`).
"""


def pin(budget):
    """Leave exactly `budget` bytes free; returns the ballast to keep while the budget
    applies. ValueError when the heap is too small for it."""
    import gc

    gc.collect()
    if gc.mem_free() < budget:
        raise ValueError("the heap is too small for the code plus a budget of %d bytes"
                         % budget)
    # Hold the budget as one block, fill every other free piece with ballast, then let
    # the budget go: what is left is the budget, in one piece.
    holder = [None, None]
    _hold(holder, budget - 64)
    ballast = _fill()
    for i in range(len(holder)):
        holder[i] = None
    gc.collect()
    if gc.mem_free() < budget - 256:
        raise ValueError("could not set the heap budget")
    return ballast


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
    import gc

    blocks = [None] * 2048
    count = 0
    size = gc.mem_free()
    while size >= 16 and count < len(blocks):
        try:
            blocks[count] = bytearray(size)
            count += 1
        except MemoryError:
            size //= 2
    return blocks
