"""Lines of a text file read a piece at a time, the same on CPython and MicroPython.

    from tools.replay import lines
    with open("game.shots", "rb") as f:
        for number, raw in lines.raw_lines(f):   # raw: the line's bytes, no line end
            words = lines.words_of(raw)          # ValueError: what is wrong with the line

Shot scripts (tools.replay.shotscript) and raw input timelines (tools.sim.board.timeline) share
these rules. A line ends at LF, CRLF or a lone CR; a UTF-8 byte order mark before the
first line is skipped; a line longer than MAX_LINE bytes raises LineError at once, so
neither a long file nor one enormous line is ever held whole. Words are plain ASCII
separated by spaces or tabs; any UTF-8 text may follow "#". Every message is plain ASCII
and names a character by its code point, because the two interpreters disagree on what
is a space or a digit beyond ASCII, on what repr() shows, and on which bytes are UTF-8.
"""

try:
    from micropython import const
except ImportError:  # CPython
    def const(x):
        return x


MAX_LINE = const(4096)  # bytes in one line, comment included
_CHUNK = const(512)
_BOM = b"\xef\xbb\xbf"


class LineError(ValueError):
    """A line that cannot be read: `line` is its number, `message` says why."""

    def __init__(self, line, message):
        super().__init__(message)
        self.line = line
        self.message = message


class ReadError(Exception):
    """The file cannot be opened or read (OSError underneath), said the same on both."""

    _REASONS = {1: "not permitted", 2: "no such file", 5: "input/output error",
                13: "permission denied", 20: "a part of the path is not a folder",
                21: "it is a folder", 36: "file name too long", 40: "too many symbolic links"}

    def __init__(self, exc):
        code = exc.args[0] if exc.args and isinstance(exc.args[0], int) else None
        super().__init__(self._REASONS.get(code, "error %s" % code))

    def text(self, name):
        return "%s: cannot read: %s" % (name, self.args[0])


def raw_lines(stream):
    """(line number, bytes) for each line of a binary stream, read a small piece at a time."""
    number = 0
    pending = b""  # the start of a line whose end is not read yet
    after_cr = False  # the last piece ended in CR: a LF first in the next one belongs to it
    while True:
        try:
            chunk = stream.read(_CHUNK)
        except OSError as e:
            raise ReadError(e) from None
        if not chunk:
            break
        start = 0
        if after_cr and chunk[0] == 10:
            start = 1
        after_cr = False
        n = len(chunk)
        cr = -2
        while start < n:
            lf = chunk.find(b"\n", start)
            if cr != -1 and cr < start:
                cr = chunk.find(b"\r", start)
            end = lf if cr < 0 or (0 <= lf < cr) else cr
            if end < 0:
                if len(pending) + n - start > MAX_LINE:
                    raise LineError(number + 1, "line longer than %d bytes" % MAX_LINE)
                pending += chunk[start:]
                break
            if len(pending) + end - start > MAX_LINE:
                raise LineError(number + 1, "line longer than %d bytes" % MAX_LINE)
            line = pending + chunk[start:end]
            pending = b""
            number += 1
            if number == 1 and line[:3] == _BOM:
                line = line[3:]
            yield number, line
            start = end + 1
            if chunk[end] == 13:
                if start == n:
                    after_cr = True
                elif chunk[start] == 10:
                    start += 1
    if pending:
        number += 1
        if number == 1 and pending[:3] == _BOM:
            pending = pending[3:]
        yield number, pending


def _utf8_error(raw):
    """Index of the first byte that is not strict UTF-8 in `raw`, or -1.

    Written out rather than left to bytes.decode(): the MicroPython unix port accepts
    sequences (surrogates, overlong forms) that CPython refuses, and both must agree."""
    i = 0
    n = len(raw)
    while i < n:
        b = raw[i]
        if b < 0x80:
            i += 1
            continue
        lo, hi = 0x80, 0xBF
        if 0xC2 <= b <= 0xDF:
            need = 1
        elif 0xE0 <= b <= 0xEF:
            need = 2
            if b == 0xE0:
                lo = 0xA0
            elif b == 0xED:
                hi = 0x9F  # no surrogates
        elif 0xF0 <= b <= 0xF4:
            need = 3
            if b == 0xF0:
                lo = 0x90
            elif b == 0xF4:
                hi = 0x8F  # nothing past U+10FFFF
        else:
            return i
        if i + need >= n:
            return i
        if not lo <= raw[i + 1] <= hi:
            return i
        for k in range(i + 2, i + 1 + need):
            if not 0x80 <= raw[k] <= 0xBF:
                return i
        i += 1 + need
    return -1


def _code_point(raw, i):
    """The code point of the (valid) UTF-8 sequence starting at raw[i]."""
    b = raw[i]
    if b < 0x80:
        return b
    need = 1 if b < 0xE0 else 2 if b < 0xF0 else 3
    value = b & (0x3F >> need)
    for k in range(i + 1, i + 1 + need):
        value = (value << 6) | (raw[k] & 0x3F)
    return value


def shown(text):
    """`text` quoted for a message in plain printable ASCII, the same on both interpreters
    (repr() differs between them for characters beyond ASCII)."""
    out = []
    for ch in text:
        c = ord(ch)
        if ch == "\\" or ch == "'":
            out.append("\\" + ch)
        elif 0x20 <= c < 0x7F:
            out.append(ch)
        elif c < 0x100:
            out.append("\\x%02x" % c)
        elif c < 0x10000:
            out.append("\\u%04x" % c)
        else:
            out.append("\\U%08x" % c)
    return "'" + "".join(out) + "'"


def words_of(raw):
    """The words of one line (bytes, without its line end), or ValueError.

    A character that only looks like a space or a digit (no-break space, Arabic-Indic
    digits) is refused by name, not guessed at."""
    if raw and (max(raw) >= 0x80 or min(raw) < 0x20 or raw.find(b"\x7f") >= 0):
        if _utf8_error(raw) >= 0:
            raise ValueError("not UTF-8 text")
        cut = raw.find(b"#")
        if cut >= 0:
            raw = raw[:cut]
        column = 0
        for i in range(len(raw)):
            b = raw[i]
            if b & 0xC0 != 0x80:
                column += 1  # a character starts here
            if b >= 0x80:
                raise ValueError(
                    "character U+%04X (column %d) is not plain ASCII: write keywords, numbers"
                    " and names in ASCII (any text may follow #)" % (_code_point(raw, i), column))
            if (b < 0x20 and b != 9) or b == 0x7F:
                raise ValueError("control character U+%04X (column %d): words are separated "
                                 "by spaces or tabs" % (b, column))
    cut = raw.find(b"#")
    if cut >= 0:
        raw = raw[:cut]
    return raw.decode().split()
