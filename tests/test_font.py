"""The 7-segment font against shapes drawn by hand, segment by segment.

HAND_SHAPES is this test's own description of what each character looks like (which of
the segments a-g are lit), written from the drawing in boardlib/font.py's docstring and
checked by eye; `hand_byte` and `hand_read` turn it into bytes and back without the font
module, so the other display tests can use it as an independent reading.
"""

import pytest

from boardlib import font
from tools.sim.board.chips import decode_segments

#  aaa
# f   b
#  ggg
# e   c
#  ddd  dp
HAND_SHAPES = {
    "0": "abcdef", "1": "bc", "2": "abdeg", "3": "abcdg", "4": "bcfg",
    "5": "acdfg", "6": "acdefg", "7": "abc", "8": "abcdefg", "9": "abcdfg",
    " ": "", "-": "g", "_": "d", "=": "dg", "+": "efg",
    "A": "abcefg", "b": "cdefg", "C": "adef", "c": "deg", "d": "bcdeg", "E": "adefg",
    "F": "aefg", "G": "acdef", "H": "bcefg", "h": "cefg", "I": "ef", "i": "e",
    "J": "bcde", "K": "acefg", "L": "def", "n": "ceg", "o": "cdeg", "P": "abefg",
    "q": "abcfg", "r": "eg", "t": "defg", "U": "bcdef", "u": "cde", "W": "bcdefg",
    "y": "bcdfg", "\u203e": "a",
}  # fmt: skip


def hand_byte(ch):
    """Segment byte of a character from HAND_SHAPES (a = bit 0 ... g = bit 6)."""
    return sum(1 << "abcdefg".index(seg) for seg in HAND_SHAPES[ch])


def hand_read(cells, colon_cells=()):
    """What a person reads from segment bytes: characters, '.' (or ':') after lit dots."""
    by_byte = {}
    for ch in HAND_SHAPES:
        by_byte.setdefault(hand_byte(ch), ch)  # digits are listed first and win
    out = ""
    for i, byte in enumerate(cells):
        out += by_byte.get(byte & 0x7F, "?")
        if byte & 0x80:
            out += ":" if i in colon_cells else "."
    return out


def test_every_character_has_the_hand_drawn_shape():
    for ch in HAND_SHAPES:
        assert font.encode_char(ch) == hand_byte(ch), ch


def test_shapes_are_unique_so_decoding_is_exact():
    bytes_seen = [hand_byte(ch) for ch in HAND_SHAPES]
    assert len(set(bytes_seen)) == len(bytes_seen)
    for ch in HAND_SHAPES:
        assert decode_segments(hand_byte(ch)) == ch
        assert decode_segments(hand_byte(ch) | 0x80) == ch  # dp does not change it


@pytest.mark.parametrize(
    "alias, shape",
    [("S", "5"), ("s", "5"), ("O", "0"), ("B", "b"), ("D", "d"), ("e", "E"), ("R", "r"),
     ("T", "t"), ("N", "n"), ("Y", "y"), ("a", "A"), ("p", "P"), ("k", "K"), ("w", "W")],
)
def test_other_case_uses_the_shape_a_person_reads_the_same(alias, shape):
    assert font.encode_char(alias) == hand_byte(shape)


@pytest.mark.parametrize("bad", ["M", "V", "X", "&", "", "ab", "\n"])
def test_character_with_no_shape_is_a_clear_error(bad):
    with pytest.raises(ValueError, match="shape"):
        font.encode_char(bad)


def test_decode_of_an_unknown_shape_is_a_question_mark():
    assert decode_segments(0b0100_1001) == "?"  # a, d, g: three bars, no character


def test_render_left_aligns_and_blanks_the_rest():
    buf = bytearray(b"\xff" * 8)
    assert font.render("Err", buf) == 3
    assert list(buf) == [hand_byte("E"), hand_byte("r"), hand_byte("r"), 0, 0, 0, 0, 0]


def test_render_dot_and_colon_light_the_previous_cell():
    buf = bytearray(8)
    assert font.render("1.5:00", buf) == 4
    assert list(buf[:4]) == [
        hand_byte("1") | 0x80, hand_byte("5") | 0x80, hand_byte("0"), hand_byte("0")
    ]


def test_render_lone_dots_take_a_cell():
    buf = bytearray(8)
    font.render(".1..", buf)
    assert list(buf[:4]) == [0x80, hand_byte("1") | 0x80, 0x80, 0]


def test_render_into_a_window_leaves_the_rest_alone():
    buf = bytearray(b"\x11" * 8)
    font.render("Pin", buf, start=4, width=4)
    assert list(buf) == [0x11] * 4 + [hand_byte("P"), hand_byte("i"), hand_byte("n"), 0]


@pytest.mark.parametrize(
    "text, start, width",
    [("toolong!", 4, 4), ("123456789", 0, 8), ("ok", 6, 4), ("M", 0, 8), (12, 0, 8)],
)
def test_render_bad_input_raises_and_loses_nothing(text, start, width):
    buf = bytearray(b"\x5a" * 8)
    with pytest.raises(ValueError):
        font.render(text, buf, start, width)
    assert buf == bytearray(b"\x5a" * 8)


def test_words_of_the_messages_read_back():
    words = ["Err", "tIE", "dISt", "brK", "SEt", "Win", "Pin", "ddbu", "CEb", "ruS",
             "FIrSt", "oFF", "FouL", "oPEn", "LASt", "rULE", "nEW", "yES"]
    for word in words:
        buf = bytearray(8)
        font.render(word, buf)
        # S and 5 share a shape: a person reads the shape, so does hand_read
        assert hand_read(buf).rstrip() == word.replace("S", "5")
