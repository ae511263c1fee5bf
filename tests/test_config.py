"""boardlib.config: a bad configuration file never stops the board; it says so instead.

The cases (tests/device/config_cases.py) run on CPython and, in one process, on the
MicroPython unix port over littlefs.
Hypothesis checks on CPython that any bytes at all load into a valid configuration.
"""

import json

from helpers import device_case_tests
from hypothesis import given, settings
from hypothesis import strategies as st

from boardlib import config

test_case = device_case_tests("config_cases")


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
                           "distance": st.lists(st.integers(1, 999), min_size=2, max_size=2),
                           "sets": st.sampled_from([1, 3, 5]), "first": st.sampled_from([1, 2])},
                          optional={"teams": st.sampled_from([0, 1])}),
)
valid_configs = st.fixed_dictionaries(
    {"display": st.sampled_from(["tm1637", "max7219", "none"]),
     "brightness": st.integers(0, 7), "glitch_ms": st.integers(0, 1000),
     "settle_ms": st.integers(100, 10000), "hold_ms": st.integers(200, 5000),
     "debounce_ms": st.integers(0, 200), "stuck_ms": st.integers(1000, 3600000),
     "link": st.sampled_from(["uart2", "uart0", "off"]),
     "watchdog_ms": st.one_of(st.just(0), st.integers(2000, 60000)),
     "colon_marker": st.booleans(), "game": game_settings},
    optional={"standing_level": st.sampled_from([0, 1]),
              "buzzer_pin": st.sampled_from([0, 2, 4, 5, 12, 18, 19, 25, 32, 33]),
              "buzzer": st.booleans()},
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
