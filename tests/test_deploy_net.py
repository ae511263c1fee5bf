"""The MQTT client: a stock board runs the umqtt.simple its release freezes; micropython-lib's
1.3.4, pinned (with its hash) in upy-requirements.txt, is what the unix-port tests import,
what `make deploy` copies to /lib of a board with `net` settings (for a build without a
frozen one) and what package.json names for mip; a frozen build takes the port's own
(docs/network.md, "Installing on a board")."""

import hashlib
import json
import os

import pytest
from twin_helpers import booted, flash, list_flash, mpremote, run_deploy

from tools.board import deploy
from tools.port import upy, upylib

pytestmark = [pytest.mark.long(17), pytest.mark.realtime]

NET = {"ssid": "club", "password": "pinboard", "host": "127.0.0.1", "port": 1883,
       "user": "t1", "pass": "t1-pw", "key": "ab" * 32, "id": "t1"}


def test_one_pinned_umqtt_for_tests_mip_and_frozen_builds():
    (name, version, digest), = [p for p in upylib.pins() if "umqtt" in p[0]]
    assert name == "micropython-umqtt.simple" and len(digest) == 64
    with open(os.path.join(upy.ROOT, "package.json")) as f:
        assert json.load(f)["deps"] == [["umqtt.simple", version]]  # not "latest"
    with open(os.path.join(upy.ROOT, "firmware", "manifest.py")) as f:
        manifest = f.read()
    # the port's manifest brings umqtt; a second copy would not compile (test_releases.py)
    assert 'include("$(PORT_DIR)/boards/manifest.py")' in manifest
    assert "umqtt" not in "".join(line.split("#")[0] for line in manifest.splitlines())
    # what deploy copies is what the unix-port tests import
    files = deploy.library_files()
    assert [t for _, t in files] == ["lib/umqtt/simple.py"]
    assert files[0][0] == os.path.join(upy.UPYLIB, "umqtt", "simple.py")


def test_deploy_installs_the_pinned_umqtt_on_a_board_with_net_settings(tmp_path):
    flash(tmp_path, cfg={"net": NET}, firmware=False)
    ca = bytes.fromhex("3082") + bytes(range(200))  # DER starts with a SEQUENCE
    (tmp_path / "club-ca.der").write_bytes(ca)
    with booted(tmp_path) as twin:
        out = run_deploy(twin.usb_path, "--no-reset", "--ca", str(tmp_path / "club-ca.der"))
        assert out.returncode == 0, out.stdout + out.stderr
        assert "umqtt.simple %s to lib/umqtt" % deploy.UMQTT_VERSION in out.stdout
        # the network link and its MQTT client import on the board; a stock MicroPython
        # finds its own frozen umqtt first (.frozen is before /lib): the copy is for a
        # build without one
        got = mpremote(twin.usb_path, "exec", "import umqtt.simple, boardlib.mqttlink\n"
                       "print(umqtt.simple.__file__)")
        assert got.returncode == 0, got.stdout + got.stderr
        assert "/.port/umqtt/simple.py" in got.stdout
        # the club's CA certificate, for TLS, beside board.cfg
        got = mpremote(twin.usb_path, "exec", "print(open('ca.der', 'rb').read().hex())")
        assert got.stdout.split()[-1] == ca.hex(), got.stdout + got.stderr
        # compiled, as the firmware is (make deploy's default), from the pinned release's
        # file
        got = mpremote(twin.usb_path, "exec",
                       "print(open('lib/umqtt/simple.mpy', 'rb').read().hex())")
        on_board = bytes.fromhex(got.stdout.split()[-1])
    assert list_flash(tmp_path, "lib/umqtt") == ["simple.mpy"]
    pinned = tmp_path / "pinned.mpy"
    deploy.compile_mpy(os.path.join(upy.UPYLIB, "umqtt", "simple.py"), str(pinned),
                       "lib/umqtt/simple.py")
    assert hashlib.sha256(on_board).digest() == hashlib.sha256(pinned.read_bytes()).digest()


def test_deploy_takes_the_ca_certificate_as_der_only(tmp_path):
    pem = tmp_path / "ca.crt"
    pem.write_text("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n")
    out = run_deploy("/dev/null", "--ca", str(pem))
    assert out.returncode == 1 and "the board reads DER: openssl x509" in out.stderr
    out = run_deploy("/dev/null", "--ca", str(tmp_path / "missing.der"))
    assert out.returncode == 1 and "cannot read" in out.stderr
