"""The wiring diagram, drawn from the board profile so that it cannot drift from the code.

    python -m tools.wiring                  # writes docs/wiring.svg from esp32_devkit
    python -m tools.wiring --check          # exit 1 when docs/wiring.svg is out of date
    python -m tools.wiring --out FILE.svg   # somewhere else

Every GPIO number, which side a part goes to and how it is powered comes from
`firmware/boards/esp32_devkit.py`, the module `firmware.hw` builds the real board from
(and the simulator its fake one). `svg(profile)` is pure: the same profile gives the same
bytes, which tests/test_wiring.py compares with the committed picture.
"""

import argparse
import os
import sys
from xml.sax.saxutils import escape

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_OUT = os.path.join(ROOT, "docs", "wiring.svg")

WIDTH = 1000
ROW = 34  # vertical distance between two wires
TOP = 120
CHIP_X, CHIP_W = 400, 200  # the ESP32 DevKit in the middle
LEFT_X, LEFT_W = 40, 230  # sensors and buttons
RIGHT_X, RIGHT_W = 730, 230  # display modules and the data link

SPOT_NAMES = ("top", "left", "centre (red pin / king)", "right", "bottom")
BUTTON_NAMES = ("carom", "foul", "ok", "undo")
COLOURS = {"spot": "#1f6fb2", "button": "#2e8b57", "tm1637": "#b8860b", "max7219": "#8b3a8b",
           "link": "#c0392b", "power": "#555555"}


class Drawing:
    def __init__(self):
        self.parts = []

    def add(self, text):
        self.parts.append(text)

    def rect(self, x, y, w, h, stroke="#333", fill="#fff", dash=False):
        extra = ' stroke-dasharray="6 4"' if dash else ""
        self.add('<rect x="%d" y="%d" width="%d" height="%d" rx="6" fill="%s" stroke="%s" '
                 'stroke-width="2"%s/>' % (x, y, w, h, fill, stroke, extra))

    def line(self, x1, y1, x2, y2, colour, dash=False):
        extra = ' stroke-dasharray="6 4"' if dash else ""
        self.add('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2"%s/>'
                 % (x1, y1, x2, y2, colour, extra))

    def text(self, x, y, words, size=13, anchor="start", weight="normal", colour="#222"):
        self.add('<text x="%d" y="%d" font-size="%d" text-anchor="%s" font-weight="%s" '
                 'fill="%s">%s</text>' % (x, y, size, anchor, weight, colour, escape(words)))

    def svg(self, height):
        head = ('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
                'viewBox="0 0 %d %d" font-family="DejaVu Sans, Arial, sans-serif">'
                % (WIDTH, height, WIDTH, height))
        background = '<rect width="100%" height="100%" fill="#fafafa"/>'
        return "\n".join([head, background, *self.parts, "</svg>"]) + "\n"


def left_rows(profile):
    """(gpio, label, kind, to ground) for the left side, top to bottom."""
    rows = []
    level = "0" if profile.SPOT_STANDING_LEVEL == 0 else "1"
    for i, gpio in enumerate(profile.SPOTS):
        rows.append((gpio, "spot %d %s sensor" % (i + 1, SPOT_NAMES[i]), "spot",
                     "pin standing reads %s" % level))
    for name in BUTTON_NAMES:
        rows.append((profile.BUTTONS[name], "button %s" % name, "button",
                     "pressed reads 0"))
    return rows


def right_groups(profile):
    """(title, kind, power, dashed, [(gpio, module pin)]) for the right side."""
    left, right, m, u = (profile.TM1637_LEFT, profile.TM1637_RIGHT, profile.MAX7219,
                         profile.LINK_UART)
    return [
        ("TM1637 player 1 (left)", "tm1637", "VCC to 3V3, GND to GND", False,
         [(left["clk"], "CLK"), (left["dio"], "DIO")]),
        ("TM1637 player 2 (right)", "tm1637", "VCC to 3V3, GND to GND", False,
         [(right["clk"], "CLK"), (right["dio"], "DIO")]),
        ("or: MAX7219 8 digits (SPI%d)" % m["spi"], "max7219", "VCC to 5V (VIN), GND to GND",
         True, [(m["sck"], "CLK"), (m["mosi"], "DIN"), (m["cs"], "CS / LOAD")]),
        ("USB-serial adapter (UART%d)" % u["id"], "link", "GND to GND; leave its VCC open",
         False, [(u["tx"], "RX  (board TX)"), (u["rx"], "TX  (board RX)")]),
    ]


def svg(profile):
    """The wiring diagram of `profile` as SVG text."""
    d = Drawing()
    d.text(WIDTH // 2, 36, "Pin-billiards scoreboard: wiring of the %s board" % profile.NAME,
           size=20, anchor="middle", weight="bold")
    d.text(WIDTH // 2, 60, "drawn by python -m tools.wiring from firmware/boards/"
           "esp32_devkit.py: the numbers are the ones the firmware uses", size=12,
           anchor="middle", colour="#555")
    pull = "internal pull-up" if profile.SPOT_PULL_UP else "external pull resistor"
    d.text(LEFT_X, 86, "sensors and buttons: each between", size=12, colour="#555")
    d.text(LEFT_X, 101, "its GPIO and GND (%s)" % pull, size=12, colour="#555")
    d.text(RIGHT_X, 86, "display and data link", size=12, colour="#555")

    # Left side: one row a wire.
    rows = left_rows(profile)
    chip_pins = []  # (gpio, y, side)
    y = TOP
    for i, (gpio, label, kind, note) in enumerate(rows):
        if i == len(profile.SPOTS):
            y += ROW // 2  # a gap between spots and buttons
        colour = COLOURS[kind]
        d.rect(LEFT_X, y - 13, LEFT_W, 26, stroke=colour)
        d.text(LEFT_X + 8, y + 4, label, size=12)
        d.line(LEFT_X + LEFT_W, y, CHIP_X, y, colour)
        d.text(LEFT_X + LEFT_W + 8, y - 5, note, size=10, colour=colour)
        chip_pins.append((gpio, y, "left"))
        y += ROW
    left_end = y

    # Right side: grouped by module, the module's box spanning its wires.
    y = TOP
    for title, kind, power, dashed, wires in right_groups(profile):
        colour = COLOURS[kind]
        top = y - 30
        height = 30 + ROW * len(wires) + 14
        d.rect(RIGHT_X, top, RIGHT_W, height, stroke=colour, dash=dashed)
        d.text(RIGHT_X + 8, top + 16, title, size=12, weight="bold", colour=colour)
        y += 4
        for gpio, pin in wires:
            d.line(CHIP_X + CHIP_W, y, RIGHT_X, y, colour, dash=dashed)
            d.text(RIGHT_X + 8, y + 4, pin, size=12)
            chip_pins.append((gpio, y, "right"))
            y += ROW
        d.text(RIGHT_X + 8, y - 8, power, size=10, colour=COLOURS["power"])
        y += 56
    right_end = y

    # The ESP32 DevKit, with a label at every wire.
    chip_top = TOP - 40
    chip_bottom = max(left_end, right_end + 30)
    d.rect(CHIP_X, chip_top, CHIP_W, chip_bottom - chip_top, stroke="#000", fill="#e8eef4")
    d.text(CHIP_X + CHIP_W // 2, chip_top + 20, "ESP32 DevKit", size=15, anchor="middle",
           weight="bold")
    for gpio, y, side in chip_pins:
        if side == "left":
            d.text(CHIP_X + 8, y + 4, "GPIO%d" % gpio, size=12, weight="bold")
        else:
            d.text(CHIP_X + CHIP_W - 8, y + 4, "GPIO%d" % gpio, size=12, anchor="end",
                   weight="bold")
    d.text(CHIP_X + CHIP_W // 2, chip_bottom - 40, "3V3: TM1637 VCC", size=11,
           anchor="middle", colour=COLOURS["power"])
    d.text(CHIP_X + CHIP_W // 2, chip_bottom - 24, "GND: every part", size=11,
           anchor="middle", colour=COLOURS["power"])
    d.text(CHIP_X + CHIP_W // 2, chip_bottom - 8, "USB: power and REPL", size=11,
           anchor="middle", colour=COLOURS["power"])

    notes = [
        "The TM1637 modules run from 3.3 V: their own pull-ups then take CLK and DIO to 3.3 V,",
        "which the ESP32's pins take (its GPIOs are not 5 V tolerant).",
        "Dashed: the MAX7219 module replaces the two TM1637s (board.cfg \"display\": "
        "\"max7219\");",
        "its DIN shares GPIO%d with a TM1637 line: fit one display or the other."
        % profile.MAX7219["mosi"],
        "Only the data link's GND, TX and RX are wired: the adapter's own VCC stays open.",
    ]
    y = chip_bottom + 36
    for note in notes:
        d.text(LEFT_X, y, note, size=12, colour="#333")
        y += 20
    return d.svg(y + 10)


def main(argv):
    p = argparse.ArgumentParser(prog="python -m tools.wiring", description=__doc__.split("\n")[0])
    p.add_argument("--out", default=DEFAULT_OUT, help="where to write (default docs/wiring.svg)")
    p.add_argument("--check", action="store_true",
                   help="do not write; exit 1 when the file differs from the profile's picture")
    args = p.parse_args(argv)
    from firmware.boards import esp32_devkit

    picture = svg(esp32_devkit)
    if args.check:
        try:
            with open(args.out) as f:
                current = f.read()
        except OSError:
            current = None
        if current != picture:
            sys.stderr.write("%s is out of date: run python -m tools.wiring\n" % args.out)
            return 1
        return 0
    with open(args.out, "w") as f:
        f.write(picture)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
