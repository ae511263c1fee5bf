"""Shot scripts (CONTRACT section 2): parse and play them, on CPython and MicroPython alike.

    from tools.replay import shotscript as script
    script.run(lambda: open("game.shots", "rb"), print, overrides={"distance": (40, 40)},
               trace=True)                    # prints one JSON line after every event
    lines = script.play(b"rules ddbu\ndistance 40\nshot pins=1\n")  # the lines as a list
    # raises script.ScriptError(line, message) for a bad line, script.FlagError for a flag
    # that does not fit the script; nothing is written then

A script is settings (rules, distance N [M], sets, first, teams) then events, one a line:
    shot [pins=1,3] [carom|casino] [foul] [foul=rouge,dehors]   (fouls may repeat: they add)
    adjust P N
    undo
"#" starts a comment. Lines end in LF, CRLF or CR; a UTF-8 byte order mark is skipped.
Keywords, numbers and names are plain ASCII (spaces or tabs between words); any UTF-8 text
may follow "#". A line is at most MAX_LINE bytes. The script is read a piece at a time
and every message is plain ASCII, so both interpreters give the same output and the same
errors for any script, however long. tools.replay and tools.replay.on_upy use run().
"""

import io

from rules_core import events
from rules_core.game import Game, GameError
from rules_core.settings import RULES_IDS, TEAMS, has
from tools.replay.lines import MAX_LINE, LineError, ReadError, raw_lines, shown, words_of

__all__ = ["MAX_LINE", "ReadError", "ScriptError", "FlagError", "run", "play"]

SETTINGS = ("rules", "distance", "sets", "first", "teams")
BATCH_MARK = "====="


class ScriptError(ValueError):
    """A bad line: `line` is its number, `message` says what is wrong."""

    def __init__(self, line, message):
        super().__init__(message)
        self.line = line
        self.message = message


class FlagError(ValueError):
    """A command-line flag that does not fit the script: `flag` is its setting name."""

    def __init__(self, flag, message):
        super().__init__(message)
        self.flag = flag
        self.message = message

    def text(self):
        """The one line that tools.replay prints, on either interpreter."""
        return "python -m tools.replay: error: argument --%s: %s" % (self.flag, self.message)


def _ascii_digits(text):
    for ch in text:
        if not "0" <= ch <= "9":
            return False
    return text != ""


def _number(text, what, signed=False):
    digits = text
    if signed and text[:1] in ("-", "+"):
        digits = text[1:]
    # str.isdigit() would pass other scripts' digits on CPython and not on MicroPython
    if not _ascii_digits(digits) or len(digits) > 6:
        raise ValueError("%s must be a whole number, got %s" % (what, shown(text)))
    return int(text)


def parse_setting(key, values):
    """Value of one setting from its words (also used for the command-line flags)."""
    if key == "rules":
        if len(values) != 1 or values[0] not in RULES_IDS:
            raise ValueError("rules must be one of %s" % ", ".join(RULES_IDS))
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
    if key == "teams":
        if len(values) != 1 or values[0] not in ("0", "1"):
            raise ValueError("teams must be 0 (singles) or 1 (two-man teams, CEB 28)")
        return int(values[0])
    raise ValueError("unknown setting %s" % shown(key))


def _spots(text):
    if not text:
        raise ValueError("pins= needs spot numbers 1-5, e.g. pins=1,3")
    mask = 0
    for part in text.split(","):
        if part not in ("1", "2", "3", "4", "5"):
            raise ValueError("bad pin number %s: spots are 1-5" % shown(part))
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
            raise ValueError("bad foul name %s: use lower-case letters, digits, - or _"
                             % shown(name))
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
            raise ValueError("unknown word %s in a shot (pins=, carom, casino, foul)" % shown(w))
    try:
        return events.encode_shot(pins or 0, carom or 0, tuple(fouls))
    except events.EventError as e:
        raise ValueError(str(e)) from None


def parse_adjust(words):
    if len(words) != 2:
        raise ValueError("adjust needs a player and a number: adjust P N")
    if words[0] not in ("1", "2"):
        raise ValueError("adjust: player must be 1 or 2, got %s" % shown(words[0]))
    try:
        return events.encode_adjust(int(words[0]), _number(words[1], "adjust points", True))
    except events.EventError as e:
        raise ValueError(str(e)) from None


def split_lines(stream):
    """(line number, words) for each line of a binary stream that says something."""
    try:
        for number, raw in raw_lines(stream):
            try:
                words = words_of(raw)
            except ValueError as e:
                raise ScriptError(number, str(e)) from None
            if words:
                yield number, words
    except LineError as e:
        raise ScriptError(e.line, e.message) from None


def _game(values):
    return Game(values["rules"], values["distance"], values.get("sets", 1),
                values.get("first", 1), values.get("teams", 0))


def _make_game(settings, overrides, line, lines):
    values = {}
    for key in SETTINGS:
        if overrides and overrides.get(key) is not None:
            values[key] = overrides[key]
        elif key in settings:
            values[key] = settings[key]
    if "rules" not in values:
        raise ScriptError(line, "no rules given (rules %s) before the first event"
                          % "|".join(RULES_IDS))
    if "distance" not in values:
        raise ScriptError(line, "no distance given (distance N or N M) before the first event")
    try:
        return _game(values)
    except GameError as e:
        if values.get("teams") and not has(values["rules"], TEAMS):
            # Team play is for the rules with teams (CEB 28): point at the script's teams
            # line, or at its rules line when --teams asked for it, so every teams mistake
            # reads FILE:LINE.
            raise ScriptError(lines.get("teams") or lines.get("rules") or line, str(e)) from None
        _blame_flag(settings, overrides, values, str(e))
        raise ScriptError(line, str(e)) from None


def _blame_flag(settings, overrides, values, message):
    """Raise FlagError when a flag makes the settings impossible that the script's own
    value (or the default) would have made fine: `--sets 3` on a ddbu script."""
    for key in SETTINGS:
        if not overrides or overrides.get(key) is None:
            continue
        trial = dict(values)
        if key in settings:
            trial[key] = settings[key]
        else:
            trial.pop(key)
        if "rules" not in trial or "distance" not in trial:
            continue
        try:
            _game(trial)
        except GameError:
            continue
        raise FlagError(key, message)


def _play(stream, overrides, write):
    """One pass over a script; write(json line) after every event when write is given.
    Returns (game, number of events)."""
    settings = {}
    setting_lines = {}
    game = None
    count = 0
    last_line = 1
    for number, words in split_lines(stream):
        last_line = number
        key = words[0]
        try:
            if key in SETTINGS:
                if game is not None:
                    raise ValueError("setting %s after the first event" % key)
                if key in settings:
                    raise ValueError("%s given twice" % key)
                settings[key] = parse_setting(key, words[1:])
                setting_lines[key] = number
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
                raise ValueError("unknown keyword %s" % shown(key))
        except ValueError as e:
            raise ScriptError(number, str(e)) from None
        if game is None:
            game = _make_game(settings, overrides, number, setting_lines)
        try:
            if record is None:
                game.undo()
            else:
                game.apply(record)
        except GameError as e:
            raise ScriptError(number, str(e)) from None
        count += 1
        if write is not None:
            write(game.state_json())
    if game is None:
        game = _make_game(settings, overrides, last_line, setting_lines)
    return game, count


def _closing(open_script, overrides, write):
    try:
        stream = open_script()
    except OSError as e:
        raise ReadError(e) from None
    try:
        return _play(stream, overrides, write)
    finally:
        stream.close()


def run(open_script, write, overrides=None, trace=False):
    """Play the script that open_script() reads (a new binary stream at each call) and
    write(line) each JSON line: the final state, or with trace one line after every event.

    Raises ScriptError, FlagError or ReadError before anything is written: with trace the script is
    read twice, checked whole before the first line goes out, so neither the script nor
    its output is ever held in memory."""
    if trace:
        game, count = _closing(open_script, overrides, None)
        if count:
            _closing(open_script, overrides, write)
            return
    else:
        game, count = _closing(open_script, overrides, None)
    write(game.state_json())


def play(data, overrides=None, trace=False):
    """Play a script given whole (bytes or str); returns the JSON lines to print."""
    if isinstance(data, str):
        data = data.encode()
    out = []
    run(lambda: io.BytesIO(data), out.append, overrides, trace)
    return out


def batch_input(scripts):
    """Many scripts (bytes or str) as one stream for play_batch: each after a line
    "===== LENGTH", so a script may hold any bytes (CR, BOM, non-UTF-8)."""
    parts = []
    for text in scripts:
        if isinstance(text, str):
            text = text.encode()
        parts.append(b"%s %d\n" % (BATCH_MARK.encode(), len(text)))
        parts.append(text)
    return b"".join(parts)


def play_batch(stream, trace=False):
    """Play the scripts of a batch_input stream one at a time; yields each script's output
    lines (or its error as "scriptK:LINE: ...") and then BATCH_MARK."""
    k = 0
    while True:
        header = stream.readline()
        if not header:
            return
        size = int(header.split()[1])
        data = stream.read(size)
        try:
            lines = play(data, None, trace)
        except ScriptError as e:
            lines = ["script%d:%d: %s" % (k, e.line, e.message)]
        data = None
        for line in lines:
            yield line
        yield BATCH_MARK
        k += 1
