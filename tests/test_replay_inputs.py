"""tools.replay on hostile input: long scripts, huge lines, non-ASCII, BOM and CR line ends,
flags that do not fit the script. CPython and the MicroPython unix port must print the same
bytes on stdout and on stderr and exit with the same status, whatever the input."""

import io
import os
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_replay_upy import both

from tools.port import upy
from tools.replay import shotscript as script

pytestmark = pytest.mark.long(11)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def replay(path, *flags):
    return subprocess.run([sys.executable, "-m", "tools.replay", str(path), *flags], cwd=ROOT,
                          capture_output=True, timeout=600)


def on_both(path, *flags):
    """(exit status, stdout, stderr) from CPython and from --micropython: must be equal."""
    a = replay(path, *flags)
    b = replay(path, *flags, "--micropython")
    assert (b.returncode, b.stdout, b.stderr) == (a.returncode, a.stdout, a.stderr)
    return a.returncode, a.stdout, a.stderr


def game_lines(events):
    """A long ddbu game that never finishes: misses, pins and takebacks."""
    cycle = ["shot pins=1", "shot", "shot pins=2,3 carom", "undo", "adjust 2 1", "shot foul"]
    return ["rules ddbu", "distance 9999"] + [cycle[k % len(cycle)] for k in range(events)]


def test_a_long_script_streams_through_a_small_heap(tmp_path):
    # 30,000 lines, 1.5 MB of script and 0.9 MB of trace through a 256 KB heap: neither the
    # script nor the output may be held whole on the unix port.
    padded = []
    for line in game_lines(3000):
        padded += [line + "  # " + "x" * 80] + ["", "# " + "y" * 90] * 5
    padded = padded[:30000]
    assert len(padded) == 30000
    data = ("\n".join(padded) + "\n").encode()
    path = tmp_path / "long.shots"
    path.write_bytes(data)
    proc = subprocess.run(
        upy.command([os.path.join(ROOT, upy.entry("replay")), str(path), "--trace"],
                    heapsize="256K"),
        capture_output=True, env=upy.env(), cwd=ROOT, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = []
    script.run(lambda: io.BytesIO(data), out.append, None, True)
    expected = "".join(line + "\n" for line in out).encode()
    assert len(expected) > 900_000
    assert proc.stdout == expected


def test_trace_of_5000_events_is_byte_identical(tmp_path):
    path = tmp_path / "t.shots"
    path.write_text("\n".join(game_lines(5000)) + "\n")
    code, out, err = on_both(path, "--trace")
    assert (code, err) == (0, b"")
    assert out.count(b"\n") == 5000


def test_a_one_megabyte_line_is_a_bad_line(tmp_path):
    path = tmp_path / "big.shots"
    path.write_bytes(b"rules ddbu\ndistance 40\nshot # " + b"z" * 1_000_000 + b"\nshot\n")
    code, out, err = on_both(path, "--trace")
    assert (code, out) == (2, b"")
    assert err == ("%s:3: line longer than %d bytes\n" % (path, script.MAX_LINE)).encode()


def test_bom_and_every_line_end_play_like_plain_lf(tmp_path):
    lines = ["# Partie \u00e0 40 \u2013 Jos\u00e9", "rules ceb", "distance 40", "sets 3",
             "shot pins=1,3", "shot carom", "adjust 2 5", "undo", "shot pins=5"]
    plain = tmp_path / "lf.shots"
    plain.write_text("\n".join(lines) + "\n")
    code, want, err = on_both(plain, "--trace")
    assert (code, err) == (0, b"")
    for name, bom, end in (("bom", "\ufeff", "\n"), ("cr", "", "\r"), ("crlf", "", "\r\n"),
                           ("bomcr", "\ufeff", "\r"), ("mixed", "\ufeff", None)):
        path = tmp_path / (name + ".shots")
        if end is None:
            body = "".join(line + ("\r", "\n", "\r\n")[k % 3] for k, line in enumerate(lines))
        else:
            body = end.join(lines)  # no line end after the last line
        path.write_bytes((bom + body).encode())
        assert on_both(path, "--trace") == (0, want, b""), name


def test_unicode_that_looks_ascii_is_refused_by_name(tmp_path):
    cases = [
        ("rules ddbu\ndistance \u0664\u0660\nshot\n", 2, "U+0664 (column 10) is not plain ASCII"),
        ("rules\u00a0ddbu\ndistance 40\n", 1, "U+00A0 (column 6)"),
        ("rules ddbu\ndistance\u200340\n", 2, "U+2003 (column 9)"),
        ("rules ddbu\ndistance 40\nshot foul=r\u00f6uge\n", 3, "U+00F6 (column 12)"),
        ("rules ddbu\ndistance 40\nshot\x1b[2J\n", 3, "control character U+001B (column 5)"),
        ("\ufeffrules ddbu\ndistance 40\n\ufeffshot\n", 3, "U+FEFF (column 1)"),
        ("rules ddbu\ndistance 40\nshot \ud800\n", 3, "not UTF-8 text"),
    ]
    for k, (text, line, message) in enumerate(cases):
        path = tmp_path / ("u%d.shots" % k)
        path.write_bytes(text.encode("utf-8", "surrogatepass"))
        code, out, err = on_both(path)
        assert (code, out) == (2, b""), text
        assert err.startswith(("%s:%d: " % (path, line)).encode()), err
        assert message.encode() in err and err.count(b"\n") == 1
        assert max(err) < 0x80


def test_a_flag_that_does_not_fit_the_script_is_a_bad_flag(tmp_path):
    path = tmp_path / "d.shots"
    path.write_text("rules ddbu\ndistance 40\n" + "shot\n" * 30)
    code, out, err = on_both(path, "--sets", "3")
    assert (code, out) == (2, b"")
    assert err == (b"python -m tools.replay: error: argument --sets: "
                   b"ddbu is played in one game: sets must be 1\n")
    ceb = tmp_path / "c.shots"
    ceb.write_text("rules ceb\ndistance 40\nsets 3\nshot\n")
    code, out, err = on_both(ceb, "--rules", "russian")
    assert (code, out) == (2, b"") and b"argument --rules: russian is played" in err
    # the flag mends the script: fine
    assert on_both(path, "--rules", "ceb", "--sets", "3")[0] == 0
    # the script's own mistake is still the script's line
    bad = tmp_path / "b.shots"
    bad.write_text("rules ddbu\ndistance 40\nsets 3\nshot\n")
    code, out, err = on_both(bad)
    assert code == 2 and err.startswith(("%s:4: " % bad).encode())


def test_flag_values_are_ascii_digits_only(tmp_path):
    path = tmp_path / "d.shots"
    path.write_text("rules ddbu\ndistance 40\nshot\n")
    for flag, value in (("--distance", "\u0664\u0660"), ("--first", "\u0662"),
                        ("--sets", "\uff13")):
        code, out, err = on_both(path, flag, value)
        assert (code, out) == (2, b""), (flag, value)
        assert flag.encode() in err


def test_unreadable_scripts_give_the_same_message(tmp_path):
    for path, reason in ((tmp_path, "it is a folder"), (tmp_path / "none", "no such file")):
        code, out, err = on_both(path)
        assert (code, out) == (2, b"")
        assert err == ("%s: cannot read: %s\n" % (path, reason)).encode()


# -- random hostile scripts: both interpreters, one process each ----------------------------------

WORDS = ["rules ddbu", "rules ceb", "rules russian", "distance 40", "distance 3 4", "sets 3",
         "first 2", "shot", "shot pins=1,3", "shot carom", "shot pins=2 foul", "adjust 1 2",
         "undo", "shot foul=rouge", "# note", ""]
ODD = ["\u00a0", "\u2003", "\u3000", "\u0664", "\u0660", "\ufeff", "\t", " ", "\x0b", "\x0c",
       "\x1c", "\x1f", "\x00", "\x1b", "\x7f", "\u00e9", "\u00df", "#", "\U0001f3b1", ",", "=",
       "1", "\u2028", "\x85", "\u0130", "K", "\u212a"]
BAD_BYTES = [b"\xff", b"\xc0\x80", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xe2\x82", b"\x80",
             b"\xef\xbb\xbf", b"\r", b"\n", b"\r\n"]


@st.composite
def hostile_line(draw):
    line = draw(st.sampled_from(WORDS))
    for _ in range(draw(st.sampled_from([0, 0, 0, 0, 0, 0, 0, 1, 1, 2]))):
        k = draw(st.integers(0, len(line)))
        line = line[:k] + draw(st.sampled_from(ODD) | st.text(max_size=3)) + line[k:]
    data = line.encode("utf-8", "surrogatepass")
    if draw(st.integers(0, 29)) == 0:
        k = draw(st.integers(0, len(data)))
        data = data[:k] + draw(st.sampled_from(BAD_BYTES)) + data[k:]
    return data


@st.composite
def hostile_script(draw):
    lines = draw(st.lists(hostile_line(), max_size=12))
    ends = draw(st.lists(st.sampled_from([b"\n", b"\r\n", b"\r"]), min_size=len(lines),
                         max_size=len(lines)))
    bom = draw(st.sampled_from([b"", b"", b"\xef\xbb\xbf"]))
    head = draw(st.sampled_from([b"", b"rules ddbu\ndistance 40\n", b"rules ceb\rdistance 9 8\r"]))
    return bom + head + b"".join(line + end for line, end in zip(lines, ends, strict=True))


@settings(max_examples=3, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(hostile_script(), min_size=50, max_size=50), st.booleans())
def test_random_hostile_scripts_give_the_same_bytes_on_both(hostile_report, scripts, trace):
    expected, got = both(scripts, trace=trace)
    assert got == expected
    assert max(expected) < 0x80
    refused = sum(1 for line in expected.splitlines() if line.startswith(b"script"))
    hostile_report("replay: random hostile scripts, CPython vs MicroPython",
                   scripts=len(scripts), refused=refused, played=len(scripts) - refused,
                   identical=len(scripts))
