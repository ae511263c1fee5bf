"""`python -m tools.config` (and `make config`): a builder writes a board.cfg the board takes
whole, with its CRC line, from flags or a short dialogue; `check` says what is wrong, key
by key; bad input is refused with exit status 2 and nothing written."""

import json
import subprocess
import sys

import pytest

from boardlib import config
from tools.board import config as tool
from tools.port import upy


def cli(*args, stdin=""):
    return subprocess.run([sys.executable, "-m", "tools.config", *args], input=stdin,
                          capture_output=True, text=True, timeout=60, cwd=upy.ROOT)


def test_write_from_flags_makes_a_file_the_board_takes_whole(tmp_path):
    path = tmp_path / "board.cfg"
    out = cli("write", str(path), "--display", "tm1637", "--colon-marker",
              "--standing-level", "1", "--link", "off", "--buzzer-pin", "2", "--buzzer", "off")
    assert out.returncode == 0, out.stderr
    want = {"display": "tm1637", "colon_marker": True, "standing_level": 1, "link": "off",
            "buzzer_pin": 2, "buzzer": False}
    loaded, error = config.load_config(str(path))
    assert error == 0 and {k: loaded[k] for k in want} == want
    header, body = path.read_text().split("\n", 1)
    assert header.startswith("PBC1 ") and json.loads(body) == want  # the settings given
    # the board's own writer made it: the same bytes as save_config
    config.save_config(str(tmp_path / "same.cfg"), want)
    assert path.read_bytes() == (tmp_path / "same.cfg").read_bytes()
    check = cli("check", str(path))
    assert check.returncode == 0 and "ok: the board takes every setting" in check.stdout


def test_network_settings_get_a_new_key_and_the_loggers_keys_line(tmp_path):
    path = tmp_path / "board.cfg"
    out = cli("write", str(path), "--ssid", "club", "--wifi-password", "wifi pw",
              "--broker", "192.168.1.10:1884", "--mqtt-user", "table3", "--mqtt-password",
              "pw", "--id", "table3", "--new-key")
    assert out.returncode == 0, out.stderr
    net = config.load_config(str(path))[0]["net"]
    assert (net["ssid"], net["host"], net["port"], net["id"]) == ("club", "192.168.1.10",
                                                                  1884, "table3")
    assert len(net["key"]) == 64
    assert "table3 %s" % net["key"] in out.stdout  # for the logger's --keys file
    check = cli("check", str(path))
    assert check.returncode == 0 and net["key"] not in check.stdout  # no secret shown
    assert cli("write", str(tmp_path / "other.cfg"), "--ssid", "club", "--broker", "h",
               "--new-key").returncode == 0
    assert json.loads((tmp_path / "other.cfg").read_text().split("\n", 1)[1])["net"][
        "key"] != net["key"]


@pytest.mark.parametrize("flags, says", [
    (["--buzzer-pin", "13"], "buzzer_pin: GPIO13 is spot 1's sensor"),
    (["--buzzer-pin", "21"], "buzzer_pin: GPIO21 is the left TM1637's DIO"),
    (["--buzzer-pin", "34"], "buzzer_pin: bad value 34: one of 0, 2, 4"),
    (["--display", "max7219", "--buzzer-pin", "5"], "buzzer_pin: GPIO5 is the MAX7219's CS"),
    (["--buzzer-pin", "17"], "GPIO17 is the data link's TX"),
    (["--brightness", "9"], "brightness: bad value 9: a whole number 0-7"),
    (["--display", "lcd"], "display: bad value 'lcd': one of tm1637, max7219, none"),
    (["--standing-level", "2"], "standing_level: bad value 2: one of 0, 1"),
    (["--ssid", "club"], "net.host is missing"),
    (["--ssid", "club", "--broker", "h", "--key", "abc"], "net.key must be 32-128 hex"),
    (["--buzzer", "loud"], "argument --buzzer: on or off"),
])
def test_bad_flags_are_refused_with_the_key_and_nothing_is_written(tmp_path, flags, says):
    path = tmp_path / "board.cfg"
    out = cli("write", str(path), *flags)
    assert out.returncode == 2 and says in out.stderr, out.stderr
    assert not path.exists()


def test_a_buzzer_pin_is_free_when_its_part_is_not_fitted(tmp_path):
    # GPIO 21 is a TM1637 line, 16 and 17 the data link: free on a MAX7219 board without it
    out = cli("write", str(tmp_path / "board.cfg"), "--display", "max7219", "--link", "off",
              "--buzzer-pin", "21")
    assert out.returncode == 0, out.stderr


def test_check_says_what_is_wrong_key_by_key(tmp_path):
    path = tmp_path / "board.cfg"
    path.write_text('{"brightness": 9, "buzzer_pin": 13, "colour": "red", "link": "uart2"}')
    out = cli("check", str(path))
    assert out.returncode == 2
    assert "brightness: bad value 9: a whole number 0-7" in out.stderr
    assert "buzzer_pin: GPIO13 is spot 1's sensor" in out.stderr
    assert "unknown key colour" in out.stderr
    assert "show Err 32" in out.stderr
    config.save_config(str(path), {"display": "max7219"})
    damaged = bytearray(path.read_bytes())
    damaged[-5] ^= 1
    path.write_bytes(bytes(damaged))
    out = cli("check", str(path))
    assert out.returncode == 2 and "CRC does not match" in out.stderr and "Err 31" in out.stderr
    out = cli("check", str(tmp_path / "missing.cfg"))
    assert out.returncode == 2 and "cannot read it" in out.stderr
    path.write_text('{"display": "max7219"}')  # by hand: the board reads it, unguarded
    out = cli("check", str(path))
    assert out.returncode == 0 and "no CRC line" in out.stdout


def test_the_dialogue_asks_again_until_an_answer_fits_and_starts_from_the_file(tmp_path):
    path = tmp_path / "board.cfg"
    answers = ["lcd", "tm1637",  # display: asked again
               "maybe", "yes",   # clock modules: the colon
               "",               # standing level: 0, as the profile
               "",               # link: uart2
               "13", "GPIO4", "GPIO2",  # buzzer: spot 1, the ok button, then a free pin
               "",               # buzzer on
               "no"]             # no network
    said = []
    assert tool.main(["ask", str(path)], read=lambda _: answers.pop(0), say=said.append) == 0
    assert answers == []
    assert "  GPIO13 is spot 1's sensor" in said and "  GPIO4 is the ok button" in said
    assert "  one of tm1637, max7219, none" in said
    cfg, error = config.load_config(str(path))
    assert error == 0 and (cfg["display"], cfg["colon_marker"], cfg["buzzer_pin"],
                           cfg["buzzer"]) == ("tm1637", True, 2, True)
    # again: every answer empty keeps what the file says
    asked = []
    assert tool.main(["ask", str(path)], read=lambda q: asked.append(q) or "",
                     say=lambda _: None) == 0
    assert config.load_config(str(path)) == (cfg, 0)
    assert "buzzer GPIO (or none) [2]: " in asked


def test_the_dialogue_on_the_network_and_an_unfinished_one(tmp_path):
    path = tmp_path / "board.cfg"
    answers = ["max7219", "", "", "none", "yes", "club", "-", "10.0.0.5", "no", "", "t3",
               "pw", "table-3", "new"]
    said = []
    assert tool.main(["ask", str(path)], read=lambda _: answers.pop(0), say=said.append) == 0
    net = config.load_config(str(path))[0]["net"]
    assert (net["password"], net["port"], net["id"], len(net["key"])) == ("", 1883,
                                                                         "table-3", 64)
    assert any(line.endswith("table-3 " + net["key"]) for line in said)
    out = cli("ask", str(tmp_path / "cut.cfg"), stdin="max7219\n0\n")  # stdin ends early
    assert out.returncode == 2 and "nothing written" in out.stderr
    assert not (tmp_path / "cut.cfg").exists()


def test_make_config_runs_the_dialogue_and_checks(tmp_path):
    path = tmp_path / "board.cfg"
    make = ["make", "--no-print-directory", "-C", upy.ROOT, "config", "CFG=%s" % path]
    out = subprocess.run(make, input="max7219\n1\noff\nnone\nno\n", capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    assert config.load_config(str(path))[0]["standing_level"] == 1
    out = subprocess.run(make + ["CHECK=1"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and "ok: the board takes every setting" in out.stdout


def test_deploy_refuses_a_bad_config_before_touching_the_board(tmp_path):
    path = tmp_path / "board.cfg"
    path.write_text('{"link": "uart7"}')
    out = subprocess.run([sys.executable, "-m", "tools.deploy", "--port", "/dev/null",
                          "--config", str(path)], capture_output=True, text=True,
                         timeout=60, cwd=upy.ROOT)
    assert out.returncode == 2
    assert "link: bad value 'uart7': one of uart2, uart0, off" in out.stderr
    assert "nothing was copied" in out.stderr


def test_the_simulated_board_starts_with_a_written_file_and_no_error(tmp_path):
    path = tmp_path / "board.cfg"
    assert cli("write", str(path), "--display", "max7219", "--standing-level", "0",
               "--buzzer-pin", "2").returncode == 0
    timeline = tmp_path / "t.timeline"
    timeline.write_text("0 pins up 1 2 3 4 5\n")
    out = subprocess.run([sys.executable, "-m", "tools.sim", "--timeline", str(timeline),
                          "--config", str(path), "--display-log"], capture_output=True,
                         text=True, timeout=120, cwd=upy.ROOT)
    assert out.returncode == 0, out.stderr
    assert "display" in out.stderr and "Err" not in out.stderr  # no Err 31 or 32 at boot


def test_every_key_s_allowed_values_are_put_in_words():
    said = {key: tool.describe_check(check) for key, _, check in config.FIELDS}
    assert said["colon_marker"] == said["buzzer"] == "true or false"
    assert said["standing_level"] == "one of 0, 1"
    assert said["watchdog_ms"] == "0 (off) or a whole number 2000-60000"
    assert not any("True" in text or "False" in text for text in said.values())
