"""A heap of a given size for the firmware, on a port whose heap is bigger.

    from tools.simboard.ballast import pin_heap, release_budget, largest_free
    ballast, holder = pin_heap(32768)   # every free byte beyond 32 KB is taken
    release_budget(holder, 32768)       # ... and the 32 KB handed back, in one piece
    ...                                 # the firmware runs in what is left
    largest_free(gc.mem_free())         # the largest block it could still have

The unix port's heap holds what the board does not (the simulator, its fake parts) besides
the firmware. Once they are in, ballast blocks take up every free piece of the heap beyond
the budget, so the run that follows has the budget and no more (tools/simboard/run.py
--heap-budget, tools/simboard/heap_device.py).
"""

import gc


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
    for i in range(len(holder)):
        holder[i] = None
    gc.collect()
    if gc.mem_free() < budget - 256:
        raise ValueError("could not set the heap budget")


def _hold(holder, size):
    holder[0] = bytearray(size)
    # The collector scans the C stack conservatively: the address of the last object
    # made may linger there and keep it alive. Make that a small one, not the budget.
    holder[1] = bytearray(16)


def _fill():
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
