"""Shot scripts (CONTRACT section 2): parse and play them, on CPython and MicroPython alike.

    from tools import shotscript as script
    lines = script.play(open("game.shots", "rb").read(), overrides={"distance": (40, 40)},
                        trace=False)          # -> list of JSON lines to print
    # raises script.ScriptError(line, message) for a bad line; nothing is printed then

A script is settings (rules, distance N [M], sets, first) then events, one a line:
    shot [pins=1,3] [carom|casino] [foul] [foul=rouge,dehors]   (fouls may repeat: they add)
    adjust P N
    undo
"#" starts a comment. tools.replay and tools.replay_upy print what play() returns.
"""

from rules_core import events
from rules_core.game import RULES_IDS, Game, GameError

SETTINGS = ("rules", "distance", "sets", "first")
BATCH_MARK = "====="


class ScriptError(ValueError):
    def __init__(self, line, message):
        super().__init__(message)
        self.line = line
        self.message = message


def _number(text, what, signed=False):
    digits = text
    if signed and text[:1] in ("-", "+"):
        digits = text[1:]
    if not digits or not digits.isdigit() or len(digits) > 6:
        raise ValueError("%s must be a whole number, got %r" % (what, text))
    return int(text)


def parse_setting(key, values):
    """Value of one setting from its words (also used for the command-line flags)."""
    if key == "rules":
        if len(values) != 1 or values[0] not in RULES_IDS:
            raise ValueError("rules must be one of ddbu, ceb, russian")
        return values[0]
    if key == "distance":
        if len(values) == 1 and "," in values[0]:
            values = values[0].split(",")
        if len(values) not in (1, 2):
            raise ValueError("distance needs N or N M")
        d = [_number(v, "distance") for v in values]
        for v in d:
            if v < 1:
                raise ValueError("distance must be at least 1")
        return (d[0], d[-1])
    if key in ("sets", "first"):
        if len(values) != 1:
            raise ValueError("%s needs one number" % key)
        return _number(values[0], key)
    raise ValueError("unknown setting %r" % key)


def _spots(text):
    if not text:
        raise ValueError("pins= needs spot numbers 1-5, e.g. pins=1,3")
    mask = 0
    for part in text.split(","):
        if part not in ("1", "2", "3", "4", "5"):
            raise ValueError("bad pin number %r: spots are 1-5" % part)
        bit = 1 << (int(part) - 1)
        if mask & bit:
            raise ValueError("pin %s listed twice" % part)
        mask |= bit
    return mask


def _foul_name(name):
    if not name:
        raise ValueError("empty foul name")
    for ch in name:
        if not ("a" <= ch <= "z" or "0" <= ch <= "9" or ch in "_-"):
            raise ValueError("bad foul name %r: use lower-case letters, digits, - or _" % name)
    return name


def parse_shot(words):
    """Record for the words after "shot"."""
    pins = None
    carom = None
    fouls = []
    for w in words:
        if w.startswith("pins="):
            if pins is not None:
                raise ValueError("pins given twice")
            pins = _spots(w[5:])
        elif w in ("carom", "casino"):
            if carom is not None:
                raise ValueError("carom/casino given twice")
            carom = 1 if w == "carom" else 2
        elif w == "foul" or w.startswith("foul="):
            names = ["foul"] if w == "foul" else w[5:].split(",")
            for name in names:
                fouls.append(_foul_name(name))  # a name again is one more foul (CEB 24.1)
        else:
            raise ValueError("unknown word %r in a shot (pins=, carom, casino, foul)" % w)
    try:
        return events.encode_shot(pins or 0, carom or 0, tuple(fouls))
    except events.EventError as e:
        raise ValueError(str(e)) from None


def parse_adjust(words):
    if len(words) != 2:
        raise ValueError("adjust needs a player and a number: adjust P N")
    if words[0] not in ("1", "2"):
        raise ValueError("adjust: player must be 1 or 2, got %r" % words[0])
    try:
        return events.encode_adjust(int(words[0]), _number(words[1], "adjust points", True))
    except events.EventError as e:
        raise ValueError(str(e)) from None


def split_lines(data):
    """(line number, words) for each line that says something; data is bytes or str."""
    if isinstance(data, str):
        data = data.encode()
    number = 0
    for raw in data.split(b"\n"):
        number += 1
        try:
            text = raw.decode()
        except UnicodeError:
            raise ScriptError(number, "not UTF-8 text") from None
        cut = text.find("#")
        if cut >= 0:
            text = text[:cut]
        words = text.split()
        if words:
            yield number, words


def _make_game(settings, overrides, line):
    values = {}
    for key in SETTINGS:
        if overrides and overrides.get(key) is not None:
            values[key] = overrides[key]
        elif key in settings:
            values[key] = settings[key]
    if "rules" not in values:
        raise ScriptError(line, "no rules given (rules ddbu|ceb|russian) before the first event")
    if "distance" not in values:
        raise ScriptError(line, "no distance given (distance N or N M) before the first event")
    try:
        return Game(values["rules"], values["distance"], values.get("sets", 1),
                    values.get("first", 1))
    except GameError as e:
        raise ScriptError(line, str(e)) from None


def play(data, overrides=None, trace=False):
    """Play a script; returns the JSON lines to print (final state, or one per event)."""
    settings = {}
    game = None
    out = []
    last_line = 1
    for number, words in split_lines(data):
        last_line = number
        key = words[0]
        try:
            if key in SETTINGS:
                if game is not None:
                    raise ValueError("setting %s after the first event" % key)
                if key in settings:
                    raise ValueError("%s given twice" % key)
                settings[key] = parse_setting(key, words[1:])
                continue
            if key == "shot":
                record = parse_shot(words[1:])
            elif key == "adjust":
                record = parse_adjust(words[1:])
            elif key == "undo":
                if len(words) > 1:
                    raise ValueError("undo takes nothing after it")
                record = None
            else:
                raise ValueError("unknown keyword %r" % key)
        except ValueError as e:
            raise ScriptError(number, str(e)) from None
        if game is None:
            game = _make_game(settings, overrides, number)
        try:
            if record is None:
                game.undo()
            else:
                game.apply(record)
        except GameError as e:
            raise ScriptError(number, str(e)) from None
        if trace:
            out.append(game.state_json())
    if game is None:
        game = _make_game(settings, overrides, last_line)
    if not trace or not out:
        out.append(game.state_json())
    return out


def play_batch(text, trace=False):
    """Play many scripts separated by BATCH_MARK lines; yields each script's output lines
    and then BATCH_MARK, one script at a time (a small heap holds one script's output)."""
    chunks = text.split("\n" + BATCH_MARK + "\n")
    text = None
    for k in range(len(chunks)):
        try:
            lines = play(chunks[k], None, trace)
        except ScriptError as e:
            lines = ["script%d:%d: %s" % (k, e.line, e.message)]
        chunks[k] = None  # played: its text can go
        for line in lines:
            yield line
        yield BATCH_MARK
