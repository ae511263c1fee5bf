"""tools.sim.board.timeline scenarios: parsing and virtual-time levels.

tests/test_timeline.py runs them on CPython and, all in one process, on the MicroPython
unix port.
"""


def parse_or_error(text):
    from tools.sim.board import timeline

    try:
        return [list(event) for event in timeline.parse(text)]
    except ValueError as e:
        return "error: %s" % e


def levels_trace(text, times):
    """[[time, standing mask, buttons mask], ...] at the given poll times, and end_ms."""
    from tools.sim.board import timeline

    levels = timeline.Levels(timeline.parse(text))
    out = []
    for t in times:
        standing = levels.advance(t)
        out.append([t, standing, levels.buttons])
        if levels.at(t) != (standing, levels.buttons):
            out.append([t, "at() disagrees with advance()"])
    return [out, levels.end_ms]


def file_event_counts(texts):
    from tools.sim.board import timeline

    return [len(timeline.parse(text)) for text in texts]
