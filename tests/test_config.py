"""boardlib.config: a bad configuration file never stops the board; it says so instead.

The cases run on CPython and, in one process, on the MicroPython unix port over littlefs.
Hypothesis checks on CPython that any bytes at all load into a valid configuration.
"""

import json

from helpers import case_tests
from hypothesis import given, settings
from hypothesis import strategies as st

from boardlib import config

CASES = r"""
import os
from boardlib import config
from boardlib.config import (load_config, save_config, defaults, problems,
                             ERR_CONFIG_CORRUPT, ERR_CONFIG_VALUE)


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def read(path):
    with open(path, "rb") as f:
        return f.read()


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)


def custom():
    cfg = defaults()
    cfg["display"] = "max7219"
    cfg["brightness"] = 2
    cfg["settle_ms"] = 2000
    cfg["standing_level"] = 1
    cfg["link"] = "uart0"
    cfg["game"] = {"rules": "ceb", "distance": [60, 50], "sets": 3, "first": 2}
    return cfg


def case_missing_file_is_defaults(root):
    check(load_config(root + "/none.cfg") == (defaults(), 0), "missing file")
    check(problems(defaults()) == [], "defaults are valid")
    check("standing_level" not in defaults(), "the profile's level stands by default")


def case_round_trip(root):
    path = root + "/board.cfg"
    save_config(path, custom())
    check(load_config(path) == (custom(), 0), "saved and loaded differ")
    text = read(path)
    check(text.startswith(b"PBC1 "), "header")
    save_config(path, custom())
    check(read(path) == text, "the same configuration writes the same file")
    check("board.cfg.tmp" not in os.listdir(root), "temporary file left behind")


def case_every_flipped_byte_gives_defaults(root):
    path = root + "/board.cfg"
    save_config(path, custom())
    good = read(path)
    for pos in range(len(good)):
        bad = bytearray(good)
        bad[pos] ^= 0x04
        write(path, bad)
        check(load_config(path) == (defaults(), ERR_CONFIG_CORRUPT), "flip at %d" % pos)


def case_every_cut_gives_defaults(root):
    path = root + "/board.cfg"
    save_config(path, custom())
    good = read(path)
    for end in range(len(good) - 1):
        write(path, good[:end])
        check(load_config(path) == (defaults(), ERR_CONFIG_CORRUPT), "cut at %d" % end)


def case_garbage(root):
    path = root + "/board.cfg"
    for junk in (b"\xff\xfe\x00", b"[1, 2]", b"null", b"PBC1 zzzz\n{}", b"PBC1 00000000",
                 b"{" * 3000, bytes(range(256))):
        write(path, junk)
        check(load_config(path) == (defaults(), ERR_CONFIG_CORRUPT), "junk %r" % junk[:12])


def case_hand_written_file(root):
    path = root + "/board.cfg"
    write(path, b'{"brightness": 7, "game": {"rules": "russian", "distance": 71}}')
    cfg, err = load_config(path)
    want = defaults()
    want["brightness"] = 7
    want["game"] = {"rules": "russian", "distance": [71, 71], "sets": 1, "first": 1}
    check(err == 0 and cfg == want, "plain JSON written by hand")


def case_bad_values_keep_the_rest(root):
    path = root + "/board.cfg"
    bad = ('{"brightness": 9, "hold_ms": 1000, "display": "lcd", "standing_level": true, '
           '"glitch_ms": "40", "colour": 1, "game": {"rules": "pool", "distance": 40}}')
    write(path, bad.encode())
    cfg, err = load_config(path)
    want = defaults()
    want["hold_ms"] = 1000
    check(err == ERR_CONFIG_VALUE and cfg == want, "bad values: %r %r" % (err, cfg))
    for game in ({"rules": "ddbu", "distance": [40, 0]}, {"rules": "ddbu", "distance": 40,
                 "sets": 3}, {"rules": "ceb", "distance": 40, "first": 3},
                 {"rules": "ceb", "distance": 40, "extra": 1}, [1]):
        cfg = defaults()
        cfg["game"] = game
        check(problems(cfg) != [], "game %r accepted" % (game,))


def case_save_refuses_bad_values(root):
    path = root + "/board.cfg"
    save_config(path, custom())
    before = read(path)
    for key, value in (("brightness", 8), ("link", "uart9"), ("settle_ms", 1.5),
                       ("nonsense", 1), ("hold_ms", True)):
        cfg = custom()
        cfg[key] = value
        try:
            save_config(path, cfg)
            raise AssertionError("saved %s=%r" % (key, value))
        except ValueError as e:
            check(key in str(e), "the error names %s: %s" % (key, e))
        check(read(path) == before, "a refused save changed the file")


def case_interrupted_save_keeps_old(root):
    path = root + "/board.cfg"
    save_config(path, custom())
    write(path + ".tmp", b"PBC1 0000")  # the power went before the rename
    check(load_config(path) == (custom(), 0), "old configuration kept")
    cfg = defaults()
    save_config(path, cfg)
    check(load_config(path) == (cfg, 0), "the next save goes through")


CASES = [case_missing_file_is_defaults, case_round_trip,
         case_every_flipped_byte_gives_defaults, case_every_cut_gives_defaults, case_garbage,
         case_hand_written_file, case_bad_values_keep_the_rest, case_save_refuses_bad_values,
         case_interrupted_save_keeps_old]


def run(root):
    results = []
    for case in CASES:
        for name in os.listdir(root):
            os.remove(root + "/" + name)
        try:
            case(root)
            results.append((case.__name__, ""))
        except Exception as e:
            results.append((case.__name__, "%s: %s" % (type(e).__name__, e)))
    return results
"""

UNIX_MAIN = r"""
import os
from tools.simboard.flash import RamBlockDev, mount
mount(RamBlockDev(4096, 32), "/flash")
os.mkdir("/flash/cfg")
for name, error in run("/flash/cfg"):
    print("RESULT", name, error)
"""

CASE_NAMES, test_case_on_cpython, test_case_on_micropython_littlefs = case_tests(
    CASES, UNIX_MAIN, "config_cases", heapsize="2M", timeout=60
)


def test_error_codes_are_the_documented_ones():
    # docs/persistence.md and firmware.errors: 31 unreadable, 32 a bad value
    assert (config.ERR_CONFIG_CORRUPT, config.ERR_CONFIG_VALUE) == (31, 32)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300))
def test_any_bytes_load_into_a_valid_configuration(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("fuzz") / "board.cfg"
    path.write_bytes(data)
    cfg, err = config.load_config(str(path))
    assert config.problems(cfg) == []
    assert err in (0, config.ERR_CONFIG_CORRUPT, config.ERR_CONFIG_VALUE)


game_settings = st.one_of(
    st.fixed_dictionaries({"rules": st.sampled_from(["ddbu", "russian"]),
                           "distance": st.lists(st.integers(1, 9999), min_size=2, max_size=2),
                           "sets": st.just(1), "first": st.sampled_from([1, 2])}),
    st.fixed_dictionaries({"rules": st.just("ceb"),
                           "distance": st.lists(st.integers(1, 9999), min_size=2, max_size=2),
                           "sets": st.sampled_from([1, 3, 5]), "first": st.sampled_from([1, 2])}),
)
valid_configs = st.fixed_dictionaries(
    {"display": st.sampled_from(["tm1637", "max7219", "none"]),
     "brightness": st.integers(0, 7), "glitch_ms": st.integers(0, 1000),
     "settle_ms": st.integers(100, 10000), "hold_ms": st.integers(200, 5000),
     "debounce_ms": st.integers(0, 200), "stuck_ms": st.integers(1000, 3600000),
     "link": st.sampled_from(["uart2", "uart0", "off"]), "watchdog_ms": st.integers(0, 60000),
     "game": game_settings},
    optional={"standing_level": st.sampled_from([0, 1])},
)


@settings(max_examples=200, deadline=None)
@given(valid_configs)
def test_any_valid_configuration_survives_a_save(tmp_path_factory, cfg):
    path = tmp_path_factory.mktemp("rt") / "board.cfg"
    config.save_config(str(path), cfg)
    assert config.load_config(str(path)) == (cfg, 0)
    # and the body is plain JSON a person can read and edit
    body = path.read_text().split("\n", 1)[1]
    assert json.loads(body) == cfg
