"""The players' quick card: one printable A4 page (docs/quick-card.svg).

    python -m tools.card            # writes docs/quick-card.svg
    python -m tools.card --check    # exit 1 when the committed card is out of date
    python -m tools.card --out FILE

The buttons, their holds, the setup menu and what the display's words mean, with every
picture drawn as the board draws it: the setup menu's items by `firmware.menu.Menu.draw`,
the messages by `boardlib.layout` (and the texts of `firmware.screens` and
`firmware.app`), the words from `tools.sim.words`, the table the terminal
simulator (`make sim`) reads too. So the card, the simulator and the board say the same
thing; tests/test_card.py checks that the committed card is this generator's output.
"""

import argparse
import os
import sys
from xml.sax.saxutils import escape

from boardlib import layout
from firmware import errors
from firmware.app import _draw_ask
from firmware.menu import ITEMS, Menu
from firmware.screens import _RESET_TEXT
from rules_core.settings import RULES_IDS, SETS, TEAMS, has
from tools.sim import words

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT_OUT = os.path.join(ROOT, "docs", "quick-card.svg")

# A4 portrait, 4 units to the millimetre.
PAGE_W, PAGE_H = 840, 1188
MARGIN = 48

# A menu to draw the items from: rules that play sets and teams, so that every item is
# offered.
MENU_SETTINGS = {"rules": next(r for r in RULES_IDS if has(r, SETS) and has(r, TEAMS)),
                 "distance": (60, 60), "sets": 3, "first": 1, "teams": 0}


def menu_picture(item):
    """The 8 segment bytes the board shows for setup menu item `item`."""
    menu = Menu(MENU_SETTINGS, sound=True)
    menu.item = ITEMS.index(item)
    buf = bytearray(8)
    menu.draw(buf)
    return bytes(buf)


def _text(words_text):
    def draw(buf):
        layout.text(buf, words_text)
    return draw


# Each picture of words.DISPLAY_WORDS, drawn by the board's code.
PICTURES = {
    "scores": lambda b: layout.scores(b, 25, 130, 1),
    "points": lambda b: layout.shot_points(b, 1, 6, 1),
    "foul": lambda b: layout.shot_points(b, 1, 8, 2),
    "open": lambda b: layout.shot_points(b, 1, 4, 2, foul=False),
    "capped": lambda b: layout.shot_points(b, 1, 2, 1, capped=True),
    "pins": lambda b: layout.castle(b, 0b01010, 1, "Pin", 1),
    "unset": lambda b: layout.castle(b, 0b00010, 2, "no"),
    "remaining": lambda b: layout.remaining20(b, 2, 18),
    "distance": lambda b: layout.distance(b, 1),
    "last": lambda b: layout.last_series(b, 2),
    "break": lambda b: layout.break_clock(b, 299),
    "sets": lambda b: layout.set_score(b, 1, 2),
    "marked": lambda b: layout.scores(b, 25, 30, 1, marked=2),
    "members": lambda b: layout.members(b, [2, 1], 1),
    "win": lambda b: layout.winner(b, 1),
    "tie": layout.tie,
    "ask": lambda b: _draw_ask(b, 0),
    "reset": _text(_RESET_TEXT["PWR"]),
    "error": lambda b: layout.error(b, errors.SENSOR_STUCK + 3),
}


def picture(name):
    buf = bytearray(8)
    PICTURES[name](buf)
    return bytes(buf)


class Page:
    def __init__(self):
        self.parts = []

    def add(self, text):
        self.parts.append(text)

    def text(self, x, y, said, size=13, weight="normal", colour="#222", anchor="start"):
        self.add('<text x="%d" y="%d" font-size="%d" font-weight="%s" fill="%s" '
                 'text-anchor="%s">%s</text>' % (x, y, size, weight, colour, anchor,
                                                 escape(said)))

    def digits(self, x, y, segments, scale=1.0, **data):
        """Eight 7-segment cells as on the board, a gap between the players' halves."""
        attrs = "".join(' data-%s="%s"' % (k, v) for k, v in data.items())
        self.add('<g data-segments="%s"%s>' % (segments.hex(), attrs))
        w, h = int(15 * scale), int(26 * scale)
        width = 8 * (w + 6) + 8 + 6
        self.add('<rect x="%d" y="%d" width="%d" height="%d" rx="3" fill="#141414"/>'
                 % (x, y, width, h + 10))
        cx = x + 6
        for i, seg in enumerate(segments):
            if i == 4:
                cx += 8
            self._cell(cx, y + 5, w, h, seg)
            cx += w + 6
        self.add("</g>")
        return width

    def _cell(self, x, y, w, h, seg):
        t = max(2, w // 6)  # a segment's thickness
        half = h // 2
        bars = (  # a, b, c, d, e, f, g as (x, y, width, height)
            (x + t, y, w - 2 * t, t), (x + w - t, y + t, t, half - t - t // 2),
            (x + w - t, y + half + t // 2, t, half - t - t // 2), (x + t, y + h - t, w - 2 * t, t),
            (x, y + half + t // 2, t, half - t - t // 2), (x, y + t, t, half - t - t // 2),
            (x + t, y + half - t // 2, w - 2 * t, t))
        for bit, (bx, by, bw, bh) in enumerate(bars):
            lit = seg >> bit & 1
            self.add('<rect x="%d" y="%d" width="%d" height="%d" fill="%s"/>'
                     % (bx, by, bw, bh, "#ff3b30" if lit else "#262626"))
        self.add('<circle cx="%d" cy="%d" r="%d" fill="%s"/>'
                 % (x + w + 3, y + h - t // 2, max(2, t // 2 + 1),
                    "#ff3b30" if seg & 0x80 else "#262626"))

    def svg(self):
        head = ('<svg xmlns="http://www.w3.org/2000/svg" width="210mm" height="297mm" '
                'viewBox="0 0 %d %d" font-family="DejaVu Sans, Arial, sans-serif">'
                % (PAGE_W, PAGE_H))
        return "\n".join([head, '<rect width="100%" height="100%" fill="#fff"/>',
                          *self.parts, "</svg>"]) + "\n"


def _heading(page, y, title):
    page.text(MARGIN, y, title, size=17, weight="bold", colour="#0d47a1")
    page.add('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#0d47a1" stroke-width="1.5"/>'
             % (MARGIN, y + 6, PAGE_W - MARGIN, y + 6))
    return y + 26


SEP = "  \u00b7  "  # between the items of a line (SVG folds runs of spaces into one)


def card():
    """The quick card as SVG text."""
    page = Page()
    page.text(PAGE_W // 2, 52, "Pin-billiards scoreboard: quick card", size=24,
              weight="bold", anchor="middle")
    page.text(PAGE_W // 2, 74, "four buttons, no referee: what they do and what the "
              "display says", size=12, colour="#555", anchor="middle")
    y = 106
    for line in words.SHOT_WORDS:
        page.text(MARGIN, y, line, size=13)
        y += 18
    y = _heading(page, y + 18, "Buttons")
    page.text(MARGIN + 80, y, "press", size=11, weight="bold", colour="#555")
    page.text(MARGIN + 400, y, "hold (about a second)", size=11, weight="bold",
              colour="#555")
    y += 20
    for name, _, press, hold, _ in words.BUTTONS:
        page.add('<g data-button="%s">' % name)
        page.text(MARGIN, y, name, size=14, weight="bold")
        lines = max(_wrapped(page, MARGIN + 80, y, press, 46, size=12),
                    _wrapped(page, MARGIN + 400, y, hold, 52, size=12))
        page.add("</g>")
        y += 14 * lines + 10
    y = _heading(page, y + 14, "Setup menu: hold ok")
    keys = SEP.join("%s: %s" % (name, press) for name, _, press, _ in words.MENU_BUTTONS)
    page.text(MARGIN, y, keys + SEP + "hold carom or foul: a distance by 1", size=12)
    y += 18
    for note in words.MENU_NOTES:
        page.text(MARGIN, y, note, size=12, colour="#333")
        y += 17
    y += 4
    column = (PAGE_W - 2 * MARGIN) // 2
    rows = (len(ITEMS) + 1) // 2
    for i, item in enumerate(ITEMS):
        x = MARGIN + (i // rows) * column
        iy = y + (i % rows) * 28
        width = page.digits(x, iy, menu_picture(item), scale=0.6, item=item)
        _wrapped(page, x + width + 12, iy + 12, words.MENU_WORDS[item], TEXT_COLUMN, size=12)
    y = _heading(page, y + rows * 28 + 16, "What the display says")
    rows = (len(words.DISPLAY_WORDS) + 1) // 2
    for i, (name, meaning) in enumerate(words.DISPLAY_WORDS):
        x = MARGIN + (i // rows) * column
        iy = y + (i % rows) * ROW_DISPLAY
        width = page.digits(x, iy, picture(name), scale=0.6, picture=name)
        _wrapped(page, x + width + 12, iy + 10, meaning, TEXT_COLUMN + 3)
    y += rows * ROW_DISPLAY + 4
    calls = "Buzzer calls: " + "; ".join("%s: %s" % (name, words.CALL_SOUNDS[name])
                                         for name in words.CALL_WORDS)
    y = _heading(page, y + 14 * _wrapped(page, MARGIN, y + 8, calls, 120) + 18, "Err codes")
    rows = (len(words.ERROR_WORDS) + 1) // 2
    for i, (code, meaning) in enumerate(words.ERROR_WORDS):
        x = MARGIN + (i // rows) * column
        iy = y + (i % rows) * 26
        page.text(x, iy + 4, "Err %s" % code, size=12, weight="bold")
        _wrapped(page, x + 84, iy + 4, meaning, 46)
    page.text(PAGE_W // 2, PAGE_H - 22, "made by python -m tools.card from tools/sim/words.py "
              "and the board's own drawing code", size=10, colour="#777", anchor="middle")
    return page.svg()


TEXT_COLUMN = 35  # characters of a meaning beside its picture
ROW_DISPLAY = 32  # a picture of the display and its meaning (at most two lines)


def _wrapped(page, x, y, text, width, size=11):
    """`text` in lines of at most `width` characters; returns how many."""
    import textwrap

    lines = textwrap.wrap(text, width)
    for i, line in enumerate(lines):
        page.text(x, y + i * 14, line, size=size, colour="#333")
    return len(lines)


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m tools.card", description=__doc__.split("\n")[0])
    p.add_argument("--out", default=DEFAULT_OUT, help="where to write (default: docs/)")
    p.add_argument("--check", action="store_true",
                   help="do not write; exit 1 when the file differs from the generator's card")
    args = p.parse_args(argv)
    made = card()
    if args.check:
        try:
            with open(args.out) as f:
                current = f.read()
        except OSError:
            current = None
        if current != made:
            sys.stderr.write("%s is out of date: run python -m tools.card\n" % args.out)
            return 1
        return 0
    with open(args.out, "w") as f:
        f.write(made)
    return 0


if __name__ == "__main__":
    sys.exit(main())
