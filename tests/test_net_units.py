"""The network link's small parts: HMAC-SHA256 on both interpreters, the `net` settings,
the `net up/down` timeline lines, the error codes (docs/network.md)."""

import hashlib
import hmac
import json
import random

import pytest
from helpers import device_case_tests, device_value

from boardlib import config, netconfig
from tools.sim.board import timeline

GOOD = {"ssid": "club", "password": "pw", "host": "127.0.0.1", "key": "ab" * 32}


@pytest.mark.parametrize("interpreter", ["cpython", "micropython"])
def test_hmac_matches_cpythons_hmac(interpreter):
    rnd = random.Random(5)
    cases = []
    for key_len in (0, 1, 16, 32, 63, 64, 65, 100):
        for msg_len in (0, 1, 55, 64, 200):
            cases.append((bytes(rnd.randrange(256) for _ in range(key_len)),
                          bytes(rnd.randrange(256) for _ in range(msg_len))))
    expected = [hmac.new(k, m, hashlib.sha256).hexdigest() for k, m in cases]
    assert device_value(interpreter, "net_cases", "hmac_hex", cases) == expected


def test_unix_port_has_sha256_but_no_hmac():
    assert device_value("micropython", "net_cases", "hash_modules") == [True, False]


test_case = device_case_tests("net_cases")


@pytest.mark.parametrize("net, problem", [
    (dict(GOOD), None),
    (dict(GOOD, port=8883, tls=True, user="t1", id="table-1"), None),
    ({"ssid": "club", "host": "h"}, "net.key is missing"),
    (dict(GOOD, key="abc"), "net.key must be 32-128 hex digits (a 16-64 byte key)"),
    (dict(GOOD, key="zz" * 16), "net.key must be 32-128 hex digits (a 16-64 byte key)"),
    (dict(GOOD, port=0), "net.port must be 1-65535"),
    (dict(GOOD, port="1883"), "net.port must be 1-65535"),
    (dict(GOOD, tls="yes"), "net.tls must be true or false"),
    (dict(GOOD, id="Table 1"), "net.id may hold only a-z, 0-9, - and _"),
    (dict(GOOD, ssid=""), "net.ssid must be text of 1-32 characters"),
    (dict(GOOD, colour="red"), "net: unknown key colour"),
    (dict(GOOD, host="192.168.1.300"), "net.host: 192.168.1.300 is not an IPv4 address"),
    (dict(GOOD, host="1883"), "net.host: 1883 is not an IPv4 address"),
    (dict(GOOD, host="10.0.0.7"), None),
    (dict(GOOD, host="broker.club"), None),
    ("wifi", "net must be an object"),
])
def test_net_settings_are_checked(net, problem):
    assert netconfig.problem(net) == problem


def test_board_cfg_with_net_round_trips_and_bad_net_means_no_network(tmp_path):
    cfg = config.defaults()
    cfg["net"] = dict(GOOD, user="t1", id="t1")
    path = str(tmp_path / "board.cfg")
    config.save_config(path, cfg)
    loaded, error = config.load_config(path)
    assert error == 0
    assert loaded["net"] == netconfig.normal(cfg["net"])
    assert loaded["net"]["port"] == 1883
    (tmp_path / "bad.cfg").write_text(json.dumps({"brightness": 3, "net": {"ssid": "x"}}))
    loaded, error = config.load_config(str(tmp_path / "bad.cfg"))
    assert error == config.ERR_CONFIG_VALUE
    assert "net" not in loaded and loaded["brightness"] == 3
    assert config.load_config(str(tmp_path / "none.cfg"))[0].get("net") is None


def test_net_timeline_lines():
    events = timeline.parse("0 pins up 1 2 3 4 5\n5000 net down\n9000 net up\n")
    levels = timeline.Levels(events)
    assert [levels.advance(t) is not None and levels.net for t in (0, 5000, 8995, 9000)] == [
        1, 0, 0, 1]
    with pytest.raises(ValueError, match="2: expected 'net up' or 'net down'"):
        timeline.parse("0 pins up 1\n10 net sideways\n")


def test_the_board_looks_a_name_up_over_udp_without_blocking():
    """boardlib.netdns.Resolver, the board's own DNS query (RFC 1035), against the ESP32
    twin's DNS server: an A record, and an unknown name answered NXDOMAIN (ENOENT, 2);
    a `.local` name is asked the same way (mDNS, RFC 6762)."""
    from tools.sim.board.radio import Radio

    radio = Radio()
    try:
        radio.names.update({"broker.club": "127.0.4.10", "pi.local": "127.0.4.11"})
        assert device_value("micropython", "net_cases", "resolve",
                            ["broker.club", "nobody.club", "pi.local"], radio.dns_port) == [
            "127.0.4.10", 2, "127.0.4.11"]
    finally:
        radio.close()
