"""The wiring pictures in docs/ are the ones the board profile draws: every wire on the
DevKit pin the profile gives it, the pins in board order with their names, power and
ground to every part, the spots where they stand on the table, a sensor under a pin."""

import os
import re
import types
import xml.etree.ElementTree as ET

import pytest

from firmware.boards import esp32_devkit
from tools.board import wiring

SVG = "{http://www.w3.org/2000/svg}"

# ESP32-DevKitC V4, Espressif's "Header Block" tables (ESP-IDF docs, get-started-devkitc):
# J2 and J3, pin 1 at the antenna end, as the names are printed beside the pins.
J2 = ["3V3", "EN", "VP", "VN", "IO34", "IO35", "IO32", "IO33", "IO25", "IO26", "IO27",
      "IO14", "IO12", "GND", "IO13", "D2", "D3", "CMD", "5V"]
J3 = ["GND", "IO23", "IO22", "TX", "RX", "IO21", "GND", "IO19", "IO18", "IO5", "IO17",
      "IO16", "IO4", "IO0", "IO2", "IO15", "D1", "D0", "CLK"]


def _profile(**changes):
    fields = {k: getattr(esp32_devkit, k) for k in dir(esp32_devkit) if k.isupper()}
    fields.update(changes)
    return types.SimpleNamespace(**fields)


def groups(picture, **attrs):
    """The <g> elements whose data-* attributes include `attrs`."""
    root = ET.fromstring(picture)
    found = []
    for g in root.iter(SVG + "g"):
        if all(g.get("data-" + k.replace("_", "-")) == str(v) for k, v in attrs.items()):
            found.append(g)
    return found


def ends(group):
    """Every end point of the lines and polylines in a group."""
    points = set()
    for line in group.iter(SVG + "line"):
        points |= {(int(line.get("x1")), int(line.get("y1"))),
                   (int(line.get("x2")), int(line.get("y2")))}
    for line in group.iter(SVG + "polyline"):
        xy = [tuple(int(v) for v in p.split(",")) for p in line.get("points").split()]
        points |= {xy[0], xy[-1]}
    return points


def pin_centre(picture, pin):
    (g,) = groups(picture, header_pin=pin)
    circle = g.find(SVG + "circle")
    return int(circle.get("cx")), int(circle.get("cy"))


def test_the_committed_pictures_are_what_the_profile_draws():
    for name, picture in wiring.pictures(esp32_devkit).items():
        with open(os.path.join(wiring.DOCS, name)) as f:
            assert f.read() == picture, "run: python -m tools.wiring (%s)" % name
    assert wiring.main(["--check"]) == 0


def test_the_devkit_pins_are_in_board_order_with_their_names():
    picture = wiring.svg(esp32_devkit)
    for header, names in (("J2", J2), ("J3", J3)):
        ys = []
        for number, silk in enumerate(names, 1):
            (g,) = groups(picture, header_pin="%s-%d" % (header, number))
            assert g.get("data-silk") == silk
            assert silk in [t.text for t in g.iter(SVG + "text")]
            ys.append(pin_centre(picture, "%s-%d" % (header, number)))
        assert [y for _, y in ys] == sorted(y for _, y in ys)  # antenna end first
        assert len({x for x, _ in ys}) == 1
    assert pin_centre(picture, "J2-1")[0] < pin_centre(picture, "J3-1")[0]  # J2 on the left


def test_every_wire_ends_on_the_pin_of_its_gpio():
    picture = wiring.svg(esp32_devkit)
    p = esp32_devkit
    wires = {"spot%d" % (i + 1): gpio for i, gpio in enumerate(p.SPOTS)}
    wires.update({"button-" + name: gpio for name, gpio in p.BUTTONS.items()})
    wires.update({"tm1637-1-clk": p.TM1637_LEFT["clk"], "tm1637-1-dio": p.TM1637_LEFT["dio"],
                  "tm1637-2-clk": p.TM1637_RIGHT["clk"], "tm1637-2-dio": p.TM1637_RIGHT["dio"],
                  "max7219-din": p.MAX7219["mosi"], "max7219-cs": p.MAX7219["cs"],
                  "max7219-clk": p.MAX7219["sck"], "link-rx": p.LINK_UART["tx"],
                  "link-tx": p.LINK_UART["rx"],
                  # the optional buzzer, dashed, on the example board.cfg's pin
                  "buzzer-+": p.BUZZER_EXAMPLE_PIN})
    for wire, gpio in wires.items():
        (g,) = groups(picture, wire=wire)
        header, number, _ = wiring.header_pin(gpio)
        pin = "%s-%d" % (header, number)
        assert g.get("data-pin") == pin and g.get("data-gpio") == str(gpio)
        assert pin_centre(picture, pin) in ends(g), wire
        assert "IO%d" % gpio in J2 + J3  # a pin named by its GPIO (not EN, VP, TX, D0...)
    labels = re.findall(r">GPIO(\d+)<", picture)  # one label a wire
    assert sorted(int(n) for n in labels) == sorted(wires.values())


def test_power_and_ground_reach_every_part():
    picture = wiring.svg(esp32_devkit)
    for wire, pin in (("power-3v3", "J2-1"), ("power-gnd", "J3-1"), ("power-5v", "J2-19"),
                      ("ground-left", "J2-14"), ("ground-right", "J3-7")):
        (g,) = groups(picture, wire=wire)
        assert g.get("data-pin") == pin and pin_centre(picture, pin) in ends(g), wire
    supplies = {g.get("data-wire"): g.get("data-power") for g in groups(picture)
                if g.get("data-power")}
    assert supplies["tm1637-1-vcc"] == supplies["tm1637-2-vcc"] == "3V3"  # not 5 V
    assert supplies["max7219-vcc"] == "5V"
    assert all(supplies[m + "-gnd"] == "GND" for m in ("tm1637-1", "tm1637-2", "max7219",
                                                       "link"))
    assert "link-vcc" not in supplies  # the adapter's own VCC stays open
    # the sensors and buttons: each box has its GND stub on a rail to a GND pin
    (left,) = groups(picture, wire="ground-left")
    rail_stubs = len(list(left.iter(SVG + "line"))) - 2
    on_j2 = [g for g in groups(picture) if (g.get("data-wire") or "").startswith(
        ("spot", "button")) and g.get("data-pin", "").startswith("J2")]
    assert rail_stubs == len(on_j2) == 7


def test_the_picture_follows_the_profile():
    moved = _profile(SPOTS=(13, 14, 27, 26, 2), SPOT_STANDING_LEVEL=1)
    picture = wiring.svg(moved)
    assert picture != wiring.svg(esp32_devkit)
    (spot5,) = groups(picture, wire="spot5")
    assert spot5.get("data-pin") == "J3-15" and pin_centre(picture, "J3-15") in ends(spot5)
    assert ">GPIO2<" in picture and ">GPIO25<" not in picture
    assert "pin standing reads 1" in picture and "pin standing reads 0" not in picture
    # a display line moved to J2 goes round the board to its module
    moved = _profile(TM1637_LEFT={"clk": 12, "dio": 21})
    (clk,) = groups(wiring.svg(moved), wire="tm1637-1-clk")
    assert clk.get("data-pin") == "J2-13"
    with pytest.raises(ValueError, match="GPIO20 is not on"):
        wiring.svg(_profile(SPOTS=(13, 14, 27, 26, 20)))


def test_the_spots_stand_in_a_plus_each_with_its_gpio():
    picture = wiring.spots_svg(esp32_devkit)
    centres = {}
    for spot in range(1, 6):
        found = groups(picture, spot=spot)
        assert len(found) == 2  # on the table, and the large plus
        big = found[1]
        assert big.get("data-gpio") == str(esp32_devkit.SPOTS[spot - 1])
        assert "GPIO%d" % esp32_devkit.SPOTS[spot - 1] in [t.text for t in big.iter(SVG + "text")]
        c = big.find(SVG + "circle")
        centres[spot] = (int(c.get("cx")), int(c.get("cy")))
    (x3, y3) = centres[3]
    assert centres[1][0] == x3 == centres[5][0] and centres[1][1] < y3 < centres[5][1]
    assert centres[2][1] == y3 == centres[4][1] and centres[2][0] < x3 < centres[4][0]
    moved = wiring.spots_svg(_profile(SPOTS=(13, 14, 2, 26, 25)))
    assert groups(moved, spot=3)[1].get("data-gpio") == "2"


def test_a_sensor_under_a_pin_in_three_kinds_wired_as_the_profile_reads():
    picture = wiring.sensors_svg(esp32_devkit)
    kinds = [g.get("data-sensor") for g in groups(picture) if g.get("data-sensor")]
    assert kinds == ["microswitch", "reed", "ir"]
    (ir,) = groups(picture, sensor="ir")
    assert {"3V3", "GND", "GPIO%d" % esp32_devkit.SPOTS[2]} <= {
        t.text for t in ir.iter(SVG + "text")}  # the IR module is powered
    assert "pin standing: closed, the GPIO reads 0 (GND);" in picture
    high = wiring.sensors_svg(_profile(SPOT_STANDING_LEVEL=1))
    assert "standing_level 1: use a switch that opens" in high
    assert "reads 1" in high and "reads 0 (GND)" not in high


def test_check_reports_a_stale_picture(tmp_path, capsys):
    for name, picture in wiring.pictures(_profile(SPOTS=(13, 14, 27, 26, 2))).items():
        (tmp_path / name).write_text(picture)
    assert wiring.main(["--check", "--out", str(tmp_path)]) == 1
    assert "out of date" in capsys.readouterr().err
    assert wiring.main(["--out", str(tmp_path)]) == 0
    assert wiring.main(["--check", "--out", str(tmp_path)]) == 0
