"""boardlib.layout on the unix port: the same screens, and no allocation while drawing.

tests/test_layout.py reads the drawn cells as a person would and compares them with what
was written by hand.
"""

from boardlib import layout


def draw_all(calls):
    """[function, args, kwargs] each drawn into a fresh buffer: the cells, or "ValueError"."""
    out = []
    for name, args, kwargs in calls:
        buf = bytearray(b"\xff" * 8)
        try:
            getattr(layout, name)(buf, *args, **kwargs)
            out.append(list(buf))
        except ValueError:
            out.append("ValueError")
    return out


def allocations_while_drawing():
    """1 if the screens drawn between shots and every second allocate, else 0."""
    import micropython

    buf = bytearray(8)
    layout.scores(buf, 1, 2, 1)
    micropython.heap_lock()
    try:
        layout.scores(buf, 1234, 56, 2)
        layout.scores(buf, -12, 99999, 1)
        layout.break_clock(buf, 299)
        layout.set_score(buf, 1, 2)
        allocated = 0
    except MemoryError:
        allocated = 1
    micropython.heap_unlock()
    return allocated
