"""The board state as one JSON line, byte-identical on CPython and MicroPython.

    from rules_core.jsonout import state_json
    line = state_json(game.state())
    # {"rules":"ddbu","distance":[40,40],...}   compact separators, fixed key order

Dict order differs between the interpreters, so the keys are written in the order listed
here (the contract's order, then the documented extras). Only the value types the state
uses are supported: None, bool, int, str, lists of those, and the "last" object.
"""

STATE_KEYS = (
    "rules", "distance", "score", "remaining", "turn", "innings", "series", "high", "sets",
    "shots", "status", "winner", "last", "set_points", "match_points", "announce",
    "marked", "members", "first", "best_of", "last_series",
)
LAST_KEYS = ("player", "points", "to", "foul")


def _value(v, out):
    if v is None:
        out.append("null")
    elif v is True:
        out.append("true")
    elif v is False:
        out.append("false")
    elif isinstance(v, int):
        out.append(str(v))
    elif isinstance(v, str):
        # State strings are plain ASCII names; escape the two characters JSON requires.
        out.append('"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"')
    elif isinstance(v, list):
        out.append("[")
        for k in range(len(v)):
            if k:
                out.append(",")
            _value(v[k], out)
        out.append("]")
    elif isinstance(v, dict):
        _object(v, LAST_KEYS, out)
    else:
        raise TypeError("cannot write %r as JSON" % (v,))


def _object(d, keys, out):
    out.append("{")
    first = True
    for key in keys:
        if key in d:
            if not first:
                out.append(",")
            first = False
            out.append('"' + key + '":')
            _value(d[key], out)
    out.append("}")


def state_json(state):
    """One JSON line (no newline) for a board-state dict."""
    out = []
    _object(state, STATE_KEYS, out)
    return "".join(out)
