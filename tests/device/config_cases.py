"""boardlib.config cases: a bad configuration file never stops the board; it says so.

Run by tests/test_config.py on CPython over the host's files and on the MicroPython unix
port over littlefs (a fresh RAM flash of the board's kind for each case).
"""

import os

from boardlib.config import (
    ERR_CONFIG_CORRUPT,
    ERR_CONFIG_VALUE,
    defaults,
    load_config,
    problems,
    save_config,
)
from device.support import check, read, scratch_dir, write

HEAPSIZE = "2M"
BLOCKS = 32


def custom():
    cfg = defaults()
    cfg["display"] = "max7219"
    cfg["brightness"] = 2
    cfg["settle_ms"] = 2000
    cfg["standing_level"] = 1
    cfg["link"] = "uart0"
    cfg["game"] = {"rules": "ceb", "distance": [60, 50], "sets": 3, "first": 2}
    return cfg


def case_missing_file_is_defaults():
    root = scratch_dir(BLOCKS)
    check(load_config(root + "/none.cfg") == (defaults(), 0), "missing file")
    check(problems(defaults()) == [], "defaults are valid")
    check("standing_level" not in defaults(), "the profile's level stands by default")


def case_round_trip():
    root = scratch_dir(BLOCKS)
    path = root + "/board.cfg"
    save_config(path, custom())
    check(load_config(path) == (custom(), 0), "saved and loaded differ")
    text = read(path)
    check(text.startswith(b"PBC1 "), "header")
    save_config(path, custom())
    check(read(path) == text, "the same configuration writes the same file")
    check("board.cfg.tmp" not in os.listdir(root), "temporary file left behind")


def case_every_flipped_byte_gives_defaults():
    root = scratch_dir(BLOCKS)
    path = root + "/board.cfg"
    save_config(path, custom())
    good = read(path)
    for pos in range(len(good)):
        bad = bytearray(good)
        bad[pos] ^= 0x04
        write(path, bad)
        check(load_config(path) == (defaults(), ERR_CONFIG_CORRUPT), "flip at %d" % pos)


def case_every_cut_gives_defaults():
    root = scratch_dir(BLOCKS)
    path = root + "/board.cfg"
    save_config(path, custom())
    good = read(path)
    for end in range(len(good) - 1):
        write(path, good[:end])
        check(load_config(path) == (defaults(), ERR_CONFIG_CORRUPT), "cut at %d" % end)


def case_garbage():
    root = scratch_dir(BLOCKS)
    path = root + "/board.cfg"
    for junk in (b"\xff\xfe\x00", b"[1, 2]", b"null", b"PBC1 zzzz\n{}", b"PBC1 00000000",
                 b"{" * 3000, bytes(range(256))):
        write(path, junk)
        check(load_config(path) == (defaults(), ERR_CONFIG_CORRUPT), "junk %r" % junk[:12])


def case_hand_written_file():
    root = scratch_dir(BLOCKS)
    path = root + "/board.cfg"
    write(path, b'{"brightness": 7, "game": {"rules": "russian", "distance": 71}}')
    cfg, err = load_config(path)
    want = defaults()
    want["brightness"] = 7
    want["game"] = {"rules": "russian", "distance": [71, 71], "sets": 1, "first": 1}
    check(err == 0 and cfg == want, "plain JSON written by hand")


def case_bad_values_keep_the_rest():
    root = scratch_dir(BLOCKS)
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
                 {"rules": "ceb", "distance": 40, "extra": 1}, [1],
                 {"rules": "ddbu", "distance": 40, "teams": 1},
                 {"rules": "ceb", "distance": 40, "teams": 2},
                 {"rules": "ceb", "distance": 1000}):
        cfg = defaults()
        cfg["game"] = game
        check(problems(cfg) != [], "game %r accepted" % (game,))


def case_a_buzzer_on_an_output_pin_that_is_not_the_repls():
    root = scratch_dir(BLOCKS)
    path = root + "/board.cfg"
    cfg = custom()
    cfg["buzzer_pin"] = 2
    cfg["buzzer"] = False
    save_config(path, cfg)
    check(load_config(path) == (cfg, 0), "a buzzer on GPIO2, off")
    check("buzzer_pin" not in defaults() and "buzzer" not in defaults(), "none by default")
    for key, value in (("buzzer_pin", 34), ("buzzer_pin", 1), ("buzzer_pin", 3),
                       ("buzzer_pin", 6), ("buzzer_pin", 20), ("buzzer_pin", "2"),
                       ("buzzer_pin", True), ("buzzer", 1), ("buzzer", "on")):
        bad = custom()
        bad[key] = value
        check(problems(bad) == ["%s: bad value %r" % (key, value)], "%s=%r" % (key, value))
        write(path, ('{"brightness": 3, "%s": %s}' % (key, repr(value).replace("'", '"')
                                                      .replace("True", "true"))).encode())
        got, err = load_config(path)
        check(err == ERR_CONFIG_VALUE and got["brightness"] == 3 and key not in got,
              "%s=%r is dropped, the rest kept" % (key, value))


def case_save_refuses_bad_values():
    root = scratch_dir(BLOCKS)
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


def case_interrupted_save_keeps_old():
    root = scratch_dir(BLOCKS)
    path = root + "/board.cfg"
    save_config(path, custom())
    write(path + ".tmp", b"PBC1 0000")  # the power went before the rename
    check(load_config(path) == (custom(), 0), "old configuration kept")
    cfg = defaults()
    save_config(path, cfg)
    check(load_config(path) == (cfg, 0), "the next save goes through")
