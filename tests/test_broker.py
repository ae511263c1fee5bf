"""What `python -m tools.broker` writes is a broker a club can use as it is: TLS unless told
otherwise, plain MQTT only on 127.0.0.1 unless told, a packet limit, and files the broker
can read when it is started as root and drops to its own user (docs/network.md, "The
broker"). The broker is the real Mosquitto, started with `mosquitto -c DIR/mosquitto.conf`
exactly as the docs say."""

import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

import paho.mqtt.client as paho
import pytest

from tools.board import broker as broker_tool

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

pytestmark = [
    pytest.mark.skipif(broker_tool.available() is not None, reason=str(broker_tool.available())),
    pytest.mark.long(3),
]


def _tool(*args):
    return subprocess.run([sys.executable, "-m", "tools.broker", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)


@pytest.fixture
def reachable():
    """A folder every user can pass through (pytest's own are root's alone), as a club's
    /etc/mosquitto/club would be."""
    folder = tempfile.mkdtemp(prefix="pinboard-broker-")
    os.chmod(folder, 0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def _passwords(out):
    return dict(re.findall(r"^(?:logger|board) (\S+) password (\S+)", out, re.M))


def _start(conf, port):
    proc = subprocess.Popen([broker_tool.MOSQUITTO, "-c", conf], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.stderr.read().decode()
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return proc
        except OSError:
            time.sleep(0.05)
    proc.kill()
    raise AssertionError("mosquitto did not listen")


def _client(name, password, port, ca=None):
    client = paho.Client(paho.CallbackAPIVersion.VERSION2, client_id=name)
    client.username_pw_set(name, password)
    if ca:
        client.tls_set(ca_certs=ca)
    connected, gone = threading.Event(), threading.Event()
    client.on_connect = lambda c, u, f, reason, p: connected.set() if not reason.is_failure \
        else None
    client.on_disconnect = lambda *a: gone.set()
    client.connect("127.0.0.1", port)
    client.loop_start()
    assert connected.wait(10), "%s could not connect" % name
    client.gone = gone
    return client


def test_the_written_broker_is_tls_with_a_packet_limit_and_runs_as_root(reachable,
                                                                        hostile_report):
    port = broker_tool.free_port()
    club = os.path.join(reachable, "club")
    out = _tool(club, "--board", "t1", "--tls", "127.0.0.1", "--tls-port", str(port))
    assert out.returncode == 0, out.stderr
    conf = open(os.path.join(club, "mosquitto.conf")).read()
    assert "listener %d 0.0.0.0" % port in conf and "certfile" in conf
    assert len(re.findall(r"^listener ", conf, re.M)) == 1  # no plain listener
    assert "max_packet_size %d" % broker_tool.MAX_PACKET_BYTES in conf
    assert "user " not in conf  # as root, Mosquitto drops to its own user
    unit = open(os.path.join(club, broker_tool.UNIT_NAME)).read()
    assert "ExecStart=%s -c %s/mosquitto.conf" % (broker_tool.MOSQUITTO, club) in unit
    users = _passwords(out.stdout)
    proc = _start(os.path.join(club, "mosquitto.conf"), port)
    try:
        if os.geteuid() == 0:  # it runs as the broker's user, and still read every file
            with open("/proc/%d/status" % proc.pid) as f:
                uid = int(re.search(r"^Uid:\s+(\d+)", f.read(), re.M).group(1))
            assert uid == broker_tool.broker_user()[0]
        ca = os.path.join(club, "ca.crt")
        got = []
        logger = _client("logger", users["logger"], port, ca)
        subscribed = threading.Event()
        logger.on_subscribe = lambda *a: subscribed.set()
        logger.on_message = lambda c, u, m: got.append(len(m.payload))
        logger.subscribe("pinboard/+/state")
        assert subscribed.wait(10)
        board = _client("t1", users["t1"], port, ca)
        board.publish("pinboard/t1/state", b"\x00" + b"s" * 92 + b"\x00")  # a frame
        deadline = time.monotonic() + 10
        while not got and time.monotonic() < deadline:
            time.sleep(0.02)
        assert got == [94]
        board.publish("pinboard/t1/state", b"x" * (1 << 20))  # a megabyte: disconnected
        assert board.gone.wait(10), "the broker took a packet of a megabyte"
        time.sleep(0.5)
        assert got == [94]
        board.loop_stop()
        logger.loop_stop()
        logger.disconnect()
    finally:
        proc.terminate()
        proc.wait(5)
        proc.stderr.close()
    hostile_report("broker: the written configuration", oversized_packets=1, delivered=0,
                   plain_listeners=0)


def test_a_plain_broker_is_said_so_and_listens_on_this_computer_only(reachable):
    club = os.path.join(reachable, "plain")
    port = broker_tool.free_port()
    out = _tool(club, "--board", "t1", "--plain", "--port", str(port))
    assert out.returncode == 0, out.stderr
    conf = open(os.path.join(club, "mosquitto.conf")).read()
    assert re.findall(r"^listener .*", conf, re.M) == ["listener %d 127.0.0.1" % port]
    proc = _start(os.path.join(club, "mosquitto.conf"), port)
    proc.terminate()
    proc.wait(5)
    proc.stderr.close()
    told = _tool(os.path.join(reachable, "open"), "--board", "t1", "--plain", "--bind",
                 "0.0.0.0")
    assert told.returncode == 0 and "in clear" in told.stderr
    assert "listener 1883 0.0.0.0" in open(os.path.join(reachable, "open",
                                                        "mosquitto.conf")).read()


def test_nothing_is_written_without_tls_or_plain_said(reachable):
    out = _tool(os.path.join(reachable, "none"), "--board", "t1")
    assert out.returncode == 2 and "--tls ADDRESS" in out.stderr and "--plain" in out.stderr
    assert not os.path.exists(os.path.join(reachable, "none"))


@pytest.mark.skipif(os.geteuid() != 0 or broker_tool.broker_user() is None,
                    reason="only root's Mosquitto drops to the broker's user")
def test_a_folder_the_broker_cannot_reach_is_refused(tmp_path):
    # pytest's folders are root's alone (drwx------), as root's home folder is
    out = _tool(str(tmp_path / "club"), "--board", "t1", "--plain")
    assert out.returncode == 2 and "cannot enter" in out.stderr
    assert not (tmp_path / "club").exists()


def test_a_hostile_pass_on_the_broker(hostile_report):
    """Beyond the guards' own tests (docs/hostile.md): a flood of wrong logins does not flood
    the log; connections that never log in do not keep a board out (up to the descriptor
    limit: Mosquitto 2.0 never closes them, docs/network.md)."""
    folder = tempfile.mkdtemp(prefix="pinboard-broker-")
    try:
        with broker_tool.Mosquitto(folder, {"logger": "logger-pw", "t1": "t1-pw"},
                                   ["t1"]) as mosquitto:
            tries, started = 0, time.monotonic()
            while time.monotonic() - started < 2:
                client = paho.Client(paho.CallbackAPIVersion.VERSION2,
                                     client_id="guess%d" % tries)
                client.username_pw_set("t1", "guess%d" % tries)
                try:
                    client.connect("127.0.0.1", mosquitto.port)
                    client.loop(0.2)
                    client.disconnect()
                except OSError:
                    pass
                tries += 1
            held = [socket.create_connection(("127.0.0.1", mosquitto.port))
                    for _ in range(300)]
            try:
                board = _client("t1", "t1-pw", mosquitto.port)  # still gets in
                board.loop_stop()
                board.disconnect()
            finally:
                for s in held:
                    s.close()
            log = mosquitto.log()
        assert len(log) < 2000, log[-500:]
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    hostile_report("broker: wrong logins and idle connections", wrong_logins=tries,
                   log_bytes=len(log), idle_held=300, board_kept_out=0)
