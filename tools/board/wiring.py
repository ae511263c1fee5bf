"""The wiring pictures, drawn from the board profile so that they cannot drift from the code.

    python -m tools.wiring                  # writes docs/wiring.svg, spots.svg, sensors.svg
    python -m tools.wiring --check          # exit 1 when a picture in docs/ is out of date
    python -m tools.wiring --out DIR        # somewhere else

Every GPIO number, which part it goes to and how it is powered comes from
`firmware/boards/esp32_devkit.py`, the module `firmware.hw` builds the real board from
(and the simulator its fake one). The pictures are pure functions of the profile
(`pictures(profile)`: the same profile gives the same bytes, which tests/test_wiring.py
compares with the committed files):

- `wiring.svg`: the ESP32-DevKitC V4 with its 38 pins in board order and their names as
  Espressif's guide prints them (ESP-IDF "ESP32-DevKitC V4 Getting Started Guide",
  "Header Block": J2 on the left, J3 on the right, the module's antenna at the top), every
  sensor, button, display module and the data link on the pin the profile gives it, and
  the power: 3V3, 5V and GND to every part that needs them.
- `spots.svg`: the five spots as they stand on the table, each with its GPIO.
- `sensors.svg`: a sensor under a pin: a microswitch, a reed switch and a magnet, an IR
  module, each wired as the profile's standing level wants it.

Each wire is an SVG group with `data-wire` (what it is), `data-pin` (the header pin, e.g.
`J2-15`) and `data-gpio`, so the tests can follow a wire from the part to the pin.
"""

import argparse
import os
import sys
from xml.sax.saxutils import escape, quoteattr

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DOCS = os.path.join(ROOT, "docs")
DEFAULT_OUT = os.path.join(DOCS, "wiring.svg")
PROFILE_PATH = "firmware/boards/esp32_devkit.py"

DEVKIT = "ESP32-DevKitC V4"
# The two header blocks in board order, antenna end first: (silk name, GPIO or a power
# name). ESP-IDF docs, hw-reference/esp32/get-started-devkitc, "Header Block" (J2, J3).
HEADERS = (
    ("J2", (("3V3", "3V3"), ("EN", "EN"), ("VP", 36), ("VN", 39), ("IO34", 34),
            ("IO35", 35), ("IO32", 32), ("IO33", 33), ("IO25", 25), ("IO26", 26),
            ("IO27", 27), ("IO14", 14), ("IO12", 12), ("GND", "GND"), ("IO13", 13),
            ("D2", 9), ("D3", 10), ("CMD", 11), ("5V", "5V"))),
    ("J3", (("GND", "GND"), ("IO23", 23), ("IO22", 22), ("TX", 1), ("RX", 3), ("IO21", 21),
            ("GND", "GND"), ("IO19", 19), ("IO18", 18), ("IO5", 5), ("IO17", 17),
            ("IO16", 16), ("IO4", 4), ("IO0", 0), ("IO2", 2), ("IO15", 15), ("D1", 8),
            ("D0", 7), ("CLK", 6))),
)

SPOT_PLACES = ("top", "left", "centre", "right", "bottom")  # the plus, in reading order
BUTTON_NAMES = ("carom", "foul", "ok", "undo")
COLOURS = {"spot": "#1f6fb2", "button": "#2e8b57", "tm1637": "#b8860b", "max7219": "#8b3a8b",
           "link": "#c0392b", "buzzer": "#16a085", "3V3": "#d35400", "5V": "#c0392b",
           "GND": "#333333"}

# The wiring picture's geometry.
WIDTH = 1430
PIN_TOP, ROW = 200, 30  # the first header pin's y, and the pitch of the drawing
BX, BW = 480, 300  # the board
LBOX_X, LBOX_W = 170, 260  # single-wire parts on J2's side
RBOX_X, RBOX_W = 815, 200  # single-wire parts on J3's side
CH_X, CH_STEP = 1050, 11  # channels of the module wires
MOD_X, MOD_W = 1170, 170  # display modules and the data link
RAIL_X = {"GND": 1360, "3V3": 1380, "5V": 1400}  # the modules' power rails
BOARD_BOTTOM = PIN_TOP + 18 * ROW + 40
LANE_5V = BOARD_BOTTOM + 130  # 5V runs below the board and the modules' column
LANE = {"3V3": 130, "GND": 142}  # power runs above the board
MROW = 24  # the pitch of a module's pins


class Drawing:
    def __init__(self):
        self.parts = []

    def add(self, text):
        self.parts.append(text)

    def rect(self, x, y, w, h, stroke="#333", fill="#fff", dash=False, rx=6):
        extra = ' stroke-dasharray="6 4"' if dash else ""
        self.add('<rect x="%d" y="%d" width="%d" height="%d" rx="%d" fill="%s" stroke="%s" '
                 'stroke-width="2"%s/>' % (x, y, w, h, rx, fill, stroke, extra))

    def line(self, x1, y1, x2, y2, colour, dash=False, width=2):
        extra = ' stroke-dasharray="6 4"' if dash else ""
        self.add('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="%d"%s/>'
                 % (x1, y1, x2, y2, colour, width, extra))

    def path(self, points, colour, dash=False):
        extra = ' stroke-dasharray="6 4"' if dash else ""
        self.add('<polyline points="%s" fill="none" stroke="%s" stroke-width="2"%s/>' % (
            " ".join("%d,%d" % p for p in points), colour, extra))

    def dot(self, x, y, colour, r=4, fill=None):
        self.add('<circle cx="%d" cy="%d" r="%d" fill="%s" stroke="%s" stroke-width="2"/>'
                 % (x, y, r, fill or colour, colour))

    def text(self, x, y, words, size=13, anchor="start", weight="normal", colour="#222"):
        self.add('<text x="%d" y="%d" font-size="%d" text-anchor="%s" font-weight="%s" '
                 'fill="%s">%s</text>' % (x, y, size, anchor, weight, colour, escape(words)))

    def group(self, **attrs):
        self.add("<g %s>" % " ".join("data-%s=%s" % (k.replace("_", "-"), quoteattr(str(v)))
                                     for k, v in attrs.items()))

    def end(self):
        self.add("</g>")

    def svg(self, width, height):
        head = ('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
                'viewBox="0 0 %d %d" font-family="DejaVu Sans, Arial, sans-serif">'
                % (width, height, width, height))
        background = '<rect width="100%" height="100%" fill="#fafafa"/>'
        return "\n".join([head, background, *self.parts, "</svg>"]) + "\n"


def header_pin(what):
    """(header, pin number from 1, "left" or "right") of a GPIO number or a power name's
    first pin; ValueError for one the DevKitC does not bring out."""
    for side, (header, pins) in zip(("left", "right"), HEADERS, strict=True):
        for number, (_, name) in enumerate(pins, 1):
            if name == what:
                return header, number, side
    raise ValueError("GPIO%s is not on the %s's headers" % (what, DEVKIT))


def _pin_xy(header, number):
    side = "left" if header == HEADERS[0][0] else "right"
    x = BX + 16 if side == "left" else BX + BW - 16
    return x, PIN_TOP + (number - 1) * ROW


def single_parts(profile):
    """(wire id, label, kind, note, gpio) for the parts on one GPIO and GND each."""
    level = profile.SPOT_STANDING_LEVEL
    parts = []
    for i, gpio in enumerate(profile.SPOTS):
        name = "spot %d sensor (%s)" % (i + 1, SPOT_PLACES[i])
        parts.append(("spot%d" % (i + 1), name, "spot", "pin standing reads %d" % level, gpio))
    for name in BUTTON_NAMES:
        parts.append(("button-" + name, "button %s" % name, "button", "pressed reads 0",
                      profile.BUTTONS[name]))
    return parts


def modules(profile):
    """(wire id, title, kind, dashed, [(module pin, GPIO or a power name)], note)."""
    left, right, m, u = (profile.TM1637_LEFT, profile.TM1637_RIGHT, profile.MAX7219,
                         profile.LINK_UART)
    buzzer = profile.BUZZER_PIN if profile.BUZZER_PIN is not None else (
        profile.BUZZER_EXAMPLE_PIN)
    return [
        ("tm1637-1", "TM1637 player 1 (left)", "tm1637", False,
         [("CLK", left["clk"]), ("DIO", left["dio"]), ("VCC", "3V3"), ("GND", "GND")], ""),
        ("tm1637-2", "TM1637 player 2 (right)", "tm1637", False,
         [("CLK", right["clk"]), ("DIO", right["dio"]), ("VCC", "3V3"), ("GND", "GND")], ""),
        ("max7219", "or: MAX7219 (SPI%d)" % m["spi"], "max7219", True,
         [("DIN", m["mosi"]), ("CS", m["cs"]), ("CLK", m["sck"]), ("VCC", "5V"),
          ("GND", "GND")], ""),
        ("link", "USB-serial (UART%d)" % u["id"], "link", False,
         [("RX", u["tx"]), ("TX", u["rx"]), ("GND", "GND")], "its VCC stays open"),
        # optional: dashed, on the pin docs/building.md's example board.cfg names
        ("buzzer", "optional: piezo buzzer", "buzzer", True,
         [("+", buzzer), ("-", "GND")],
         "+ via 100-220 Ohm; buzzer_pin %d" % buzzer),
    ]


def svg(profile):
    """The wiring picture of `profile` (wiring.svg) as SVG text."""
    d = Drawing()
    d.text(WIDTH // 2, 34, "Pin-billiards scoreboard: wiring of the %s board on an %s"
           % (profile.NAME, DEVKIT), size=20, anchor="middle", weight="bold")
    d.text(WIDTH // 2, 56, "drawn by python -m tools.wiring from %s: the numbers are the "
           "ones the firmware uses; the pins in board order, named as printed beside them"
           % PROFILE_PATH, size=12, anchor="middle", colour="#555")
    pull = "internal pull-up" if profile.SPOT_PULL_UP else "external pull resistor"
    d.text(LBOX_X - 30, 84, "sensors and buttons: each between its GPIO and GND (%s)" % pull,
           size=12, colour="#555")
    d.text(MOD_X - 60, 84, "display modules and the data link", size=12, colour="#555")
    _board(d, profile)
    rails = {"left": [], "right": []}  # y of the single parts' GND stubs, by side
    for wire, label, kind, note, gpio in single_parts(profile):
        header, number, side = header_pin(gpio)
        _single(d, wire, label, kind, note, gpio, header, number, side)
        rails[side].append(PIN_TOP + (number - 1) * ROW)
    for side, ys in rails.items():
        if ys:
            _ground_rail(d, side, ys)
    _modules(d, profile)
    bottom = LANE_5V + 40
    notes = [
        "TM1637 modules from 3V3: their own pull-ups then take CLK and DIO to 3.3 V, which "
        "the ESP32's pins take (its GPIOs are not 5 V tolerant).",
        "Dashed: the MAX7219 module replaces the two TM1637s (board.cfg \"display\": "
        "\"max7219\"), from 5V; its DIN shares GPIO%d with a TM1637 line: fit one display "
        "or the other." % profile.MAX7219["mosi"],
        "Only the data link's GND, TX and RX are wired: the adapter's own VCC stays open; "
        "the board is powered by its USB socket.",
        "Pins and names: Espressif, ESP-IDF docs, ESP32-DevKitC V4 Getting Started Guide, "
        "Header Block J2 and J3 (the 30-pin \"DevKit V1\" boards bring out the same GPIOs "
        "in another order: follow the GPIO numbers).",
    ]
    y = bottom
    for note in notes:
        d.text(40, y, note, size=12, colour="#333")
        y += 20
    return d.svg(WIDTH, y + 10)


def _board(d, profile):
    top, bottom = PIN_TOP - 50, BOARD_BOTTOM
    d.rect(BX, top, BW, bottom - top, stroke="#000", fill="#e8eef4")
    d.rect(BX + 80, top - 10, BW - 160, 70, stroke="#555", fill="#cfd8dc", rx=3)
    d.text(BX + BW // 2, top + 18, "ESP32-WROOM-32", size=11, anchor="middle")
    d.text(BX + BW // 2, top + 34, "(antenna end)", size=10, anchor="middle", colour="#555")
    d.text(BX + BW // 2, PIN_TOP + 9 * ROW, DEVKIT, size=13, anchor="middle", weight="bold")
    d.text(BX + BW // 2, PIN_TOP + 9 * ROW + 18, "seen from above", size=11,
           anchor="middle", colour="#555")
    d.rect(BX + BW // 2 - 26, bottom - 16, 52, 26, stroke="#555", fill="#bbb", rx=3)
    d.text(BX + BW // 2, bottom + 26, "USB: power and the REPL", size=11, anchor="middle",
           colour="#555")
    used = _used_gpios(profile)
    for header, pins in HEADERS:
        d.text(BX + (10 if header == "J2" else BW - 10), PIN_TOP - 22, header, size=11,
               anchor="start" if header == "J2" else "end", weight="bold", colour="#555")
        for number, (silk, name) in enumerate(pins, 1):
            x, y = _pin_xy(header, number)
            power = name in ("3V3", "5V", "GND")
            mine = name in used or power
            colour = COLOURS.get(name, "#000") if power else ("#000" if mine else "#999")
            d.group(header_pin="%s-%d" % (header, number), silk=silk)
            d.dot(x, y, colour, r=5, fill="#fff" if not mine else colour)
            if header == "J2":
                d.text(x + 12, y + 4, silk, size=11, weight="bold" if mine else "normal",
                       colour=colour)
            else:
                d.text(x - 12, y + 4, silk, size=11, anchor="end",
                       weight="bold" if mine else "normal", colour=colour)
            d.end()


def _used_gpios(profile):
    used = set(profile.SPOTS) | set(profile.BUTTONS.values())
    for _, _, _, _, pins, _ in modules(profile):
        used |= {gpio for _, gpio in pins if isinstance(gpio, int)}
    return used


def _single(d, wire, label, kind, note, gpio, header, number, side):
    x, y = _pin_xy(header, number)
    colour = COLOURS[kind]
    d.group(wire=wire, pin="%s-%d" % (header, number), gpio=gpio)
    box, width = (LBOX_X, LBOX_W) if side == "left" else (RBOX_X, RBOX_W)
    d.rect(box, y - 12, width, 24, stroke=colour)
    d.text(box + 8, y + 4, label, size=12)
    d.text(box + width - 6, y + 4, note, size=9, anchor="end", colour=colour)
    if side == "left":
        d.line(box + width, y, x, y, colour)
        d.text(box + width + 4, y - 5, "GPIO%d" % gpio, size=10, weight="bold",
               colour=colour)
    else:
        d.line(x, y, box, y, colour)
        d.text(box - 4, y - 5, "GPIO%d" % gpio, size=10, anchor="end", weight="bold",
               colour=colour)
    d.end()


def _ground_rail(d, side, ys):
    """The single parts' other wire: a GND rail beside their boxes, to a GND pin."""
    colour = COLOURS["GND"]
    header = HEADERS[0][0] if side == "left" else HEADERS[1][0]
    number = [n for n, (_, name) in enumerate(HEADERS[0 if side == "left" else 1][1], 1)
              if name == "GND"][-1]
    px, py = _pin_xy(header, number)
    rail = LBOX_X - 20 if side == "left" else RBOX_X + RBOX_W + 14
    edge = LBOX_X if side == "left" else RBOX_X + RBOX_W
    d.group(wire="ground-%s" % side, pin="%s-%d" % (header, number), gpio="GND")
    d.line(rail, min(ys + [py]), rail, max(ys + [py]), colour)
    for y in ys:
        d.line(edge, y, rail, y, colour)
        d.dot(rail, y, colour, r=3)
    d.line(rail, py, px, py, colour)
    d.dot(rail, py, colour, r=3)
    d.text(rail + (4 if side == "left" else -4), py - 5, "GND", size=10,
           anchor="start" if side == "left" else "end", weight="bold", colour=colour)
    d.end()


def _modules(d, profile):
    channel = 0
    over = 0  # wires from J2 taken over the top of the board
    labels = {}  # GPIO labels already at a pin: a second wire's goes under its line
    top = PIN_TOP - 20
    lows = {name: 0 for name in RAIL_X}  # how far down each power rail goes
    for wire, title, kind, dashed, pins, note in modules(profile):
        colour = COLOURS[kind]
        height = 30 + len(pins) * MROW
        d.rect(MOD_X, top, MOD_W, height, stroke=colour, dash=dashed)
        d.text(MOD_X + 8, top + 18, title, size=12, weight="bold", colour=colour)
        if note:
            d.text(MOD_X + 8, top + height + 14, note, size=10, colour="#555")
        for j, (pin, what) in enumerate(pins):
            ty = top + 38 + j * MROW
            if isinstance(what, int):
                header, number, side = header_pin(what)
                px, py = _pin_xy(header, number)
                cx = CH_X + channel * CH_STEP
                channel += 1
                d.group(wire="%s-%s" % (wire, pin.lower()), pin="%s-%d" % (header, number),
                        gpio=what)
                if side == "right":
                    points = [(px, py), (cx, py), (cx, ty), (MOD_X, ty)]
                else:  # round the board's top, above the power runs
                    lane = LANE["3V3"] - 10 - over * 8
                    lx = LBOX_X - 40 - over * 10
                    over += 1
                    points = [(px, py), (lx, py), (lx, lane), (cx, lane), (cx, ty), (MOD_X, ty)]
                d.path(points, colour, dash=dashed)
                below = labels.get(what, 0)
                labels[what] = below + 1
                d.text(px + (10 if side == "right" else -10), py - 5 + 17 * below,
                       "GPIO%d" % what, size=10, anchor="start" if side == "right" else "end",
                       weight="bold", colour=colour)
                d.end()
                d.text(MOD_X + 10, ty + 4, pin, size=11)
            else:
                d.group(wire="%s-%s" % (wire, pin.lower()), power=what)
                rail = RAIL_X[what]
                d.line(MOD_X + MOD_W, ty, rail, ty, COLOURS[what], dash=dashed)
                d.dot(rail, ty, COLOURS[what], r=3)
                d.end()
                d.text(MOD_X + MOD_W - 10, ty + 4, "%s (%s)" % (pin, what) if pin != what
                       else pin, size=11, anchor="end")
                lows[what] = max(lows[what], ty)
        top += height + 28
    _power(d, lows)


def _power(d, lows):
    """The modules' power rails, and the runs from the board's 3V3, GND and 5V pins."""
    for name, header, number in (("3V3",) + header_pin("3V3")[:2],
                                 ("GND", HEADERS[1][0], 1)):  # the GND at J3's top
        side = "left" if header == HEADERS[0][0] else "right"
        px, py = _pin_xy(header, number)
        colour = COLOURS[name]
        out = px - 40 if side == "left" else px + 30
        lane, rail = LANE[name], RAIL_X[name]
        d.group(wire="power-%s" % name.lower(), pin="%s-%d" % (header, number), power=name)
        d.path([(px, py), (out, py), (out, lane), (rail, lane), (rail, lows[name])], colour)
        d.text(rail - 4, lane - 4, name, size=10, anchor="end", weight="bold", colour=colour)
        d.end()
    header, number, side = header_pin("5V")
    px, py = _pin_xy(header, number)
    rail = RAIL_X["5V"]
    d.group(wire="power-5v", pin="%s-%d" % (header, number), power="5V")
    d.path([(px, py), (px - 40, py), (px - 40, LANE_5V), (rail, LANE_5V), (rail, lows["5V"])],
           COLOURS["5V"], dash=True)
    d.text(rail - 4, LANE_5V - 4, "5V (USB)", size=10, anchor="end", weight="bold",
           colour=COLOURS["5V"])
    d.end()


# -- the spots on the table -----------------------------------------------------------------------


def spots_svg(profile):
    """The five spots as they stand on the table, seen from above (spots.svg)."""
    d = Drawing()
    width, height = 860, 600
    d.text(width // 2, 32, "The five spots on the table, seen from above", size=18,
           anchor="middle", weight="bold")
    d.text(width // 2, 52, "drawn by python -m tools.wiring from %s" % PROFILE_PATH, size=11,
           anchor="middle", colour="#555")
    # The table: its long side up the picture, the foot at the bottom.
    tx, ty, tw, th = 80, 110, 220, 440
    d.rect(tx - 14, ty - 14, tw + 28, th + 28, stroke="#5d4037", fill="#8d6e63", rx=10)
    d.rect(tx, ty, tw, th, stroke="#1b5e20", fill="#2e7d32", rx=2)
    d.text(tx + tw // 2, ty - 22, "head", size=11, anchor="middle", colour="#555")
    d.text(tx + tw // 2, ty + th + 34, "foot", size=11, anchor="middle", colour="#555")
    cx, cy = tx + tw // 2, ty + th // 2
    step = 34  # the pins stand a ball's width apart (seed 004)
    places = {1: (0, -1), 2: (-1, 0), 3: (0, 0), 4: (1, 0), 5: (0, 1)}
    for spot, (dx, dy) in places.items():
        x, y = cx + dx * step, cy + dy * step
        d.group(spot=spot, gpio=profile.SPOTS[spot - 1])
        d.dot(x, y, "#fff", r=9, fill="#c62828" if spot == 3 else "#fafafa")
        d.text(x, y + 4, str(spot), size=10, anchor="middle", weight="bold",
               colour="#fff" if spot == 3 else "#222")
        d.end()
    # The same plus, large, with each spot's GPIO.
    gx, gy, big = 600, 250, 95
    d.text(gx, 110, "the plus, as the firmware numbers it", size=13, anchor="middle",
           weight="bold")
    for spot, (dx, dy) in places.items():
        x, y = gx + dx * big, gy + dy * big
        gpio = profile.SPOTS[spot - 1]
        d.group(spot=spot, gpio=gpio, place=SPOT_PLACES[spot - 1])
        d.dot(x, y, "#c62828" if spot == 3 else "#1f6fb2", r=26,
              fill="#ffebee" if spot == 3 else "#e3f2fd")
        d.text(x, y + 7, str(spot), size=22, anchor="middle", weight="bold")
        d.text(x, y + 44, "GPIO%d" % gpio, size=12, anchor="middle", weight="bold",
               colour=COLOURS["spot"])
        d.end()
    d.text(gx, gy + 58, "red pin / king", size=10, anchor="middle", colour="#c62828")
    d.line(cx + step + 14, cy, gx - big - 40, gy, "#999", dash=True, width=1)
    notes = [
        "Five pins in a plus in the middle of the table, a ball's width",
        "apart: spots 2, 3, 4 across the table, 1, 3, 5 along it (seed 004).",
        "Spot 3, the centre, is the red pin in five-pins and the king in the",
        "Russian game; in keglebillard all five are equal. The outer four",
        "score alike in every game: which one is 1, 2, 4 or 5 is the builder's,",
        "as long as the wiring check shows 12345 with every pin up.",
    ]
    y = 430
    for note in notes:
        d.text(390, y, note, size=12, colour="#333")
        y += 18
    return d.svg(width, height)


# -- a sensor under a pin -------------------------------------------------------------------------


def sensors_svg(profile):
    """A sensor under a pin: microswitch, reed switch and magnet, IR module (sensors.svg)."""
    d = Drawing()
    width, height = 1000, 480
    level = profile.SPOT_STANDING_LEVEL
    gpio = profile.SPOTS[2]
    d.text(width // 2, 32, "A sensor under a pin (cut through the table at spot 3)",
           size=18, anchor="middle", weight="bold")
    d.text(width // 2, 52, "drawn by python -m tools.wiring from %s: spot 3 on GPIO%d, "
           "\"pin standing\" reads %d" % (PROFILE_PATH, gpio, level), size=11,
           anchor="middle", colour="#555")
    panels = (("microswitch", "microswitch", "pressed by the pin through a hole"),
              ("reed", "reed switch and magnet", "a magnet in the pin's base"),
              ("ir", "IR reflective module", "looking up at the pin through a hole"))
    for i, (kind, title, how) in enumerate(panels):
        x0 = 20 + i * 325
        d.group(sensor=kind, gpio=gpio)
        d.rect(x0, 70, 305, 390, stroke="#999", fill="#fff")
        d.text(x0 + 152, 94, title, size=13, anchor="middle", weight="bold")
        d.text(x0 + 152, 112, how, size=10, anchor="middle", colour="#555")
        _pin_on_cloth(d, x0 + 152, hole=kind != "reed", magnet=kind == "reed")
        wires = _sensor(d, x0 + 152, kind)
        _sensor_wires(d, x0, wires, gpio, level, kind, profile.SPOT_PULL_UP)
        d.end()
    return d.svg(width, height)


CLOTH = 250  # the cloth's top in the sensor drawings


def _pin_on_cloth(d, x, hole, magnet):
    d.rect(x - 140, CLOTH, 280, 8, stroke="#1b5e20", fill="#2e7d32", rx=0)  # the cloth
    d.rect(x - 140, CLOTH + 8, 280, 34, stroke="#5d4037", fill="#a1887f", rx=0)  # the bed
    if hole:
        d.rect(x - 8, CLOTH, 16, 42, stroke="#fff", fill="#fff", rx=0)  # under the spot
    # the pin: a small skittle standing on its spot
    c = CLOTH
    d.add('<path d="M %d %d L %d %d C %d %d %d %d %d %d C %d %d %d %d %d %d C %d %d %d %d '
          '%d %d C %d %d %d %d %d %d Z" fill="#fafafa" stroke="#333" stroke-width="2"/>' % (
              x - 9, c, x + 9, c, x + 16, c - 34, x + 6, c - 52, x + 4, c - 64,
              x + 10, c - 72, x + 8, c - 88, x, c - 88, x - 8, c - 88, x - 10, c - 72,
              x - 4, c - 64, x - 6, c - 52, x - 16, c - 34, x - 9, c))
    if magnet:
        d.rect(x - 6, c - 12, 12, 9, stroke="#333", fill="#90a4ae", rx=1)
        d.text(x + 18, c - 6, "magnet", size=10, colour="#333")


def _sensor(d, x, kind):
    """Draw the sensor under the spot; returns its wires: (x, lead name, to)."""
    top = 310
    if kind == "microswitch":
        d.rect(x - 30, top, 60, 30, stroke="#333", fill="#eceff1", rx=2)
        d.line(x, top, x, CLOTH - 2, "#333", width=3)  # the plunger, up through the hole
        d.text(x + 38, top + 14, "closed while", size=10, colour="#333")
        d.text(x + 38, top + 26, "the pin stands", size=10, colour="#333")
        return ((x - 15, "COM", "GND"), (x + 15, "NO", "GPIO"))
    if kind == "reed":
        y = CLOTH + 20  # in a groove in the bed, just under the cloth
        d.add('<ellipse cx="%d" cy="%d" rx="26" ry="8" fill="#e0f7fa" stroke="#333" '
              'stroke-width="2"/>' % (x, y))
        d.line(x - 20, y, x + 3, y + 1, "#333")
        d.line(x - 3, y - 1, x + 20, y, "#333")
        d.text(x + 34, top + 14, "reed (or hall) switch", size=10, colour="#333")
        d.text(x + 34, top + 26, "closed by the magnet", size=10, colour="#333")
        return ((x - 26, "", "GND"), (x + 26, "", "GPIO"))
    d.rect(x - 34, top, 68, 26, stroke="#333", fill="#263238", rx=2)
    d.dot(x - 12, top - 2, "#7e57c2", r=6)
    d.dot(x + 12, top - 2, "#424242", r=6)
    d.line(x - 12, top - 8, x - 2, CLOTH + 2, "#7e57c2", dash=True, width=1)
    d.line(x - 2, CLOTH + 2, x + 12, top - 8, "#7e57c2", dash=True, width=1)
    d.text(x + 40, top + 16, "LED and photodiode", size=10, colour="#333")
    return ((x - 24, "VCC", "3V3"), (x, "GND", "GND"), (x + 24, "OUT", "GPIO"))


def _sensor_wires(d, x0, wires, gpio, level, kind, pull_up):
    start = 340 if kind != "reed" else CLOTH + 20
    for i, (wx, pin, to) in enumerate(wires):
        y = 372 + i * 14
        colour = COLOURS.get(to, COLOURS["spot"])
        d.line(wx, start, wx, y, colour)
        d.line(wx, y, x0 + 290, y, colour)
        name = "GPIO%d" % gpio if to == "GPIO" else to
        d.text(x0 + 292, y - 3, name, size=10, anchor="end", weight="bold", colour=colour)
        if pin:
            d.text(wx - 3, start + 12, pin, size=9, anchor="end", colour="#555")
    pull = "the internal pull-up" if pull_up else "a pull resistor"
    if kind == "ir":
        says = ["its output goes low when it sees the pin:", "standing_level 0; one that "
                "goes high: 1"]
    elif level == 0:
        says = ["pin standing: closed, the GPIO reads 0 (GND);",
                "pin down: open, %s reads 1" % pull]
    else:
        says = ["standing_level %d: use a switch that opens" % level,
                "when the pin stands, so that it reads %d" % level]
    for i, line in enumerate(says):
        d.text(x0 + 12, 430 + i * 14, line, size=10, colour="#333")


# -- the files ------------------------------------------------------------------------------------


def pictures(profile):
    """{file name in docs/: SVG text} for every picture of `profile`."""
    return {"wiring.svg": svg(profile), "spots.svg": spots_svg(profile),
            "sensors.svg": sensors_svg(profile)}


def main(argv):
    p = argparse.ArgumentParser(prog="python -m tools.wiring", description=__doc__.split("\n")[0])
    p.add_argument("--out", default=DOCS, help="the folder to write to (default docs/)")
    p.add_argument("--check", action="store_true",
                   help="do not write; exit 1 when a file differs from the profile's picture")
    args = p.parse_args(argv)
    from firmware.boards import esp32_devkit

    stale = []
    for name, picture in pictures(esp32_devkit).items():
        path = os.path.join(args.out, name)
        if args.check:
            try:
                with open(path) as f:
                    current = f.read()
            except OSError:
                current = None
            if current != picture:
                stale.append(path)
            continue
        with open(path, "w") as f:
            f.write(picture)
    if stale:
        sys.stderr.write("%s out of date: run python -m tools.wiring\n" % ", ".join(stale))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
