"""Every screen of boardlib.layout, read back as a person reads it, on both interpreters.

The expected texts are written by hand; the bytes are read with the hand-drawn shapes
of test_font (S reads as 5). The colon of the TM1637 clock modules is the dot of cells 1
and 5, shown here as ':'. The same cases run in one MicroPython unix-port process, which
also checks that the screens drawn between shots and every second allocate nothing.
"""

import pytest
from helpers import micropython_value, run_on_micropython
from hypothesis import given
from hypothesis import strategies as st
from test_font import hand_read

from boardlib import layout

COLONS = (1, 5)

# (function, args, kwargs, what a person reads)
CASES = [
    ("scores", (25, 130, 1), {}, " . 25 130"),
    ("scores", (25, 130, 2), {}, "  25 130."),
    ("scores", (0, 0, 1), {}, " .  0   0"),
    ("scores", (9999, 10000, 1), {}, "9.9999999"),
    ("scores", (-5, 1234, 2), {}, "  -51234."),
    ("scores", (-1500, 7, 0), {}, "-999   7"),
    ("scores", (5, 3, None), {}, "   5   3"),
    ("shot_points", (1, 6, 1), {}, "  +6    "),
    ("shot_points", (2, 14, 2), {}, "     +14"),
    ("shot_points", (1, 6, 2), {}, "FouL  +6"),
    ("shot_points", (2, 12, 1), {}, " +12FouL"),
    ("shot_points", (1, 5, 2), {"foul": False}, "oPEn  +5"),
    ("shot_points", (2, 30, 1), {"foul": True}, " +30FouL"),
    ("shot_points", (1, 0, 2), {}, "FouL  +0"),
    ("shot_points", (1, 1500, 1), {}, "+999    "),
    # one rule for every rules id: FouL on the shooter's half; ddbu's foul scores nothing
    ("shot_points", (2, 0, 2), {"foul": True}, "    FouL"),
    ("shot_points", (1, 0, 1), {"foul": True}, "FouL    "),
    # capped at the distance: what counted, and the bar on top
    ("shot_points", (1, 2, 1), {"capped": True}, " \u203e+2    "),
    ("shot_points", (2, 14, 2), {"capped": True}, "    \u203e+14"),
    ("shot_points", (2, 3, 1), {"capped": True}, " \u203e+3FouL"),
    ("remaining20", (2, 18), {}, "    r 18"),
    ("remaining20", (1, 20), {}, "r 20    "),
    ("remaining20", (1, -3), {}, "r  0    "),
    ("distance", (1,), {}, "dI5t    "),
    ("distance", (2,), {}, "    dI5t"),
    ("break_clock", (300,), {}, "brK  5:00"),
    ("break_clock", (299,), {}, "brK  4:59"),
    ("break_clock", (61,), {}, "brK  1:01"),
    ("break_clock", (0,), {}, "brK  0:00"),
    ("break_clock", (-5,), {}, "brK  0:00"),
    ("break_clock", (1000,), {}, "brK  9:59"),
    ("winner", (1,), {}, " Win    "),
    ("winner", (2,), {}, "     Win"),
    ("tie", (), {}, " tIE tIE"),
    ("set_score", (2, 1), {}, "5Et25Et1"),
    ("set_score", (0, 3), {}, "5Et05Et3"),
    ("set_score", (12, -1), {}, "5Et95Et0"),
    ("last_series", (2,), {}, "    LA5t"),
    ("last_series", (1,), {}, "LA5t    "),
    ("error", (3,), {}, "Err    3"),
    ("error", (12345,), {}, "Err12345"),
    ("error", (123456,), {}, "Err99999"),
    ("error", ("P3",), {}, "Err   P3"),
    ("error", ("M",), {}, "Err   --"),
    ("error", (None,), {}, "Err   --"),
    ("text", ("SEtS 3",), {}, "5Et5 3  "),
    ("text", ("d1   40",), {}, "d1   40 "),
    ("text", ("FIrSt 1",), {}, "FIr5t 1 "),
    ("text", ("nEW  yES",), {}, "nEW  yE5"),
    ("text", ("rUL ddbu",), {}, "rUL ddbu"),
    ("text", ("oFF",), {}, "oFF     "),
]

BAD = [
    ("scores", ("1", 2, 1), {}),
    ("scores", (1, 2, 3), {}),
    ("scores", (1.5, 2, 1), {}),
    ("scores", (True, 2, 1), {}),
    ("shot_points", (0, 6, 1), {}),
    ("shot_points", (1, 6, 3), {}),
    ("remaining20", (1, "x"), {}),
    ("distance", (3,), {}),
    ("castle", (0b00010, 3, "no"), {}),
    ("winner", (None,), {}),
    ("last_series", (0,), {}),
    ("break_clock", ("5:00",), {}),
    ("set_score", (1, None), {}),
    ("text", ("rULE ddbu",), {}),  # 9 cells
    ("text", ("Mmm",), {}),
]


def draw(name, args, kwargs):
    buf = bytearray(b"\xff" * 8)  # every screen must overwrite every cell
    getattr(layout, name)(buf, *args, **kwargs)
    return buf


@pytest.mark.parametrize("name, args, kwargs, expected", CASES)
def test_screen_reads_as_written(name, args, kwargs, expected):
    assert hand_read(draw(name, args, kwargs), COLONS) == expected


@pytest.mark.parametrize("name, args, kwargs", BAD)
def test_bad_input_raises_and_leaves_the_screen(name, args, kwargs):
    buf = bytearray(b"\x5a" * 8)
    with pytest.raises(ValueError):
        getattr(layout, name)(buf, *args, **kwargs)
    assert buf == bytearray(b"\x5a" * 8)


def test_short_buffer_is_refused():
    with pytest.raises(ValueError, match="8 cells"):
        layout.scores(bytearray(4), 1, 2, 1)


@given(
    s1=st.integers(-999, 9999),
    s2=st.integers(-999, 9999),
    turn=st.sampled_from([1, 2, 0]),
)
def test_any_score_reads_right_aligned_with_one_marker(s1, s2, turn):
    text = hand_read(draw("scores", (s1, s2, turn), {}))
    marks = text.count(".")
    assert marks == (1 if turn else 0)
    plain = text.replace(".", "")
    assert plain == "%4d%4d" % (s1, s2)
    if turn == 1:
        assert text[1] == "."  # the left edge: after the first cell
    elif turn == 2:
        assert text.endswith(".")  # the right edge


@pytest.fixture(scope="module")
def upy_results():
    calls = [(n, a, k) for n, a, k, _ in CASES] + BAD
    out = run_on_micropython("layout_cases",
                             [["draw_all", [calls]], ["allocations_while_drawing", []]])
    drawn, allocated = (micropython_value(r) for r in out)
    assert len(drawn) == len(calls)
    return drawn + [allocated]


def test_micropython_draws_the_same_screens(upy_results):
    for (name, args, _, expected), got in zip(CASES, upy_results, strict=False):
        assert got != "ValueError", name
        assert hand_read(got, COLONS) == expected, (name, args)


def test_micropython_refuses_the_same_bad_input(upy_results):
    assert upy_results[len(CASES):-1] == ["ValueError"] * len(BAD)


def test_scores_clock_and_sets_allocate_nothing_on_micropython(upy_results):
    assert upy_results[-1] == 0


def test_the_shot_words_are_the_fonts():
    # shot_points draws "FouL" and "oPEn" from segment bytes of its own: they must be the
    # font's
    from boardlib import font

    assert layout._FOUL == bytes(font.encode_char(ch) for ch in "FouL")
    assert layout._OPEN == bytes(font.encode_char(ch) for ch in "oPEn")
