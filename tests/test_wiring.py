"""The wiring diagram in docs/ is the one the board profile draws, with every wire in it."""

import re
import types

from firmware.boards import esp32_devkit
from tools import wiring


def _profile(**changes):
    fields = {k: getattr(esp32_devkit, k) for k in dir(esp32_devkit) if k.isupper()}
    fields.update(changes)
    return types.SimpleNamespace(**fields)


def test_the_committed_picture_is_what_the_profile_draws():
    with open(wiring.DEFAULT_OUT) as f:
        committed = f.read()
    assert committed == wiring.svg(esp32_devkit), "run: python -m tools.wiring"
    assert wiring.main(["--check"]) == 0


def test_every_gpio_of_the_profile_is_labelled_once_per_wire():
    picture = wiring.svg(esp32_devkit)
    labels = re.findall(r">GPIO(\d+)<", picture)
    p = esp32_devkit
    wires = [*p.SPOTS, *(p.BUTTONS[n] for n in ("carom", "foul", "ok", "undo")),
             p.TM1637_LEFT["clk"], p.TM1637_LEFT["dio"], p.TM1637_RIGHT["clk"],
             p.TM1637_RIGHT["dio"], p.MAX7219["sck"], p.MAX7219["mosi"], p.MAX7219["cs"],
             p.LINK_UART["tx"], p.LINK_UART["rx"]]
    assert sorted(int(n) for n in labels) == sorted(wires)


def test_the_picture_follows_the_profile():
    moved = _profile(SPOTS=(13, 14, 27, 26, 2), SPOT_STANDING_LEVEL=1)
    picture = wiring.svg(moved)
    assert picture != wiring.svg(esp32_devkit)
    assert ">GPIO2<" in picture and ">GPIO25<" not in picture
    assert "pin standing reads 1" in picture and "pin standing reads 0" not in picture


def test_the_tm1637_modules_are_powered_from_3v3():
    picture = wiring.svg(esp32_devkit)
    assert picture.count("VCC to 3V3") == 2
    assert "VCC to 5V" not in picture.split("MAX7219")[0]


def test_check_reports_a_stale_picture(tmp_path, capsys):
    stale = tmp_path / "wiring.svg"
    stale.write_text(wiring.svg(_profile(SPOTS=(13, 14, 27, 26, 2))))
    assert wiring.main(["--check", "--out", str(stale)]) == 1
    assert "out of date" in capsys.readouterr().err
    assert wiring.main(["--out", str(stale)]) == 0
    assert wiring.main(["--check", "--out", str(stale)]) == 0
