"""Boards on the club's network: the real firmware and umqtt on the unix port, a real
Mosquitto on 127.0.0.1, the real logger with paho-mqtt, real SQLite (docs/network.md).

Skipped, saying why, where no mosquitto is installed (.ci/run installs it).
"""

import contextlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import threading
import time
import types

import paho.mqtt.client as paho
import pytest
from helpers import device_value, table_room

from tools.board import broker as broker_tool
from tools.logger import Logger
from tools.logger import frames as host_frames
from tools.logger.mqtt import MqttSource, sign
from tools.sim.timelines import Shot, build, random_game

pytestmark = [
    pytest.mark.skipif(broker_tool.available() is not None, reason=str(broker_tool.available())),
    pytest.mark.long(72),
    pytest.mark.waits,
]

BOARDS = ("t1", "t2", "t3", "t4", "t5", "t6")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KEYS = {board: bytes(range(i, i + 32)) for i, board in enumerate(BOARDS)}
USERS = {"logger": "logger-pw", **{board: board + "-pw" for board in BOARDS}}


@pytest.fixture
def broker(tmp_path):
    with broker_tool.Mosquitto(str(tmp_path / "broker"), USERS, BOARDS) as b:
        yield b


def board_cfg(path, broker_port, board, **net):
    values = {"ssid": "club", "password": "pinboard", "host": "127.0.0.1", "port": broker_port,
              "user": board, "pass": USERS[board], "key": KEYS[board].hex(), "id": board}
    values.update(net)
    path.write_text(json.dumps({"net": values}))
    return str(path)


class LoggerThread:
    def __init__(self, port, db, scheme="mqtt", ca=None, **options):
        self.source = MqttSource("%s://logger:%s@127.0.0.1:%d" % (scheme, USERS["logger"], port),
                                 keys=KEYS, ca=ca)
        self.logger = Logger([], str(db), mqtt=self.source, **options)
        self.thread = threading.Thread(target=self.logger.run_forever, daemon=True)
        self.thread.start()

    def wait(self, predicate, timeout=30.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if predicate():
                return True
            time.sleep(0.05)
        return False

    def stop(self):
        self.logger.stop()
        self.thread.join(10)
        self.logger.close()


def sim(tmp_path, timeline_text, cfg, *extra, wait=True):
    (tmp_path / "g.timeline").write_text(timeline_text)
    args = [sys.executable, "-m", "tools.sim", "--timeline", str(tmp_path / "g.timeline"),
            "--config", cfg, *extra]
    if not wait:
        return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return subprocess.run(args, capture_output=True, text=True, timeout=300)


def replay(tmp_path, script):
    (tmp_path / "g.shots").write_text(script)
    out = subprocess.run([sys.executable, "-m", "tools.replay", str(tmp_path / "g.shots")],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def export(db):
    out = subprocess.run([sys.executable, "-m", "tools.logger", "export", "--db", str(db)],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return [json.loads(line) for line in out.stdout.splitlines()]


def check_store(db, expected):
    games = export(db)
    assert len(games) == 1, games
    assert games[0]["final"] == expected
    numbers = [shot["number"] for shot in games[0]["shots"]]
    assert numbers == list(range(1, expected["shots"] + 1))  # every shot, once, in order
    return games[0]


def ended_with(lg, returncode, out, err, expected, why=""):
    """The simulated board ended well with the state `expected`, and the logger has it."""
    assert returncode == 0, err
    assert json.loads(out) == expected
    assert lg.wait(lambda: lg.logger.last_state == expected), why


@contextlib.contextmanager
def on_the_network(tmp_path, port, board, watch=None, topics=False, net=None, **options):
    """A board `board` on the broker at `port` (its board.cfg, with `net` settings over the
    usual ones), a LoggerThread storing into games.db (Logger `options`, and its `scheme`
    and `ca`) and, with `watch`, a client keeping what is published on that topic in
    `seen`. Yields a namespace: lg, cfg, db, seen, and start(timeline, *sim args), which
    starts the board without waiting; everything is stopped at the end."""
    db = tmp_path / "games.db"
    lg = LoggerThread(port, db, **options)
    started = []
    run = types.SimpleNamespace(lg=lg, db=db, seen=[],
                                cfg=board_cfg(tmp_path / "board.cfg", port, board,
                                              **(net or {})))

    def start(timeline, *extra):
        started.append(sim(tmp_path, timeline, run.cfg, *extra, wait=False))
        return started[-1]

    run.start = start
    watcher = None
    try:
        if watch is not None:
            watcher = _watch(port, watch, run.seen, topics=topics)
        yield run
    finally:
        for proc in started:
            if proc.poll() is None:
                proc.kill()
        if watcher is not None:
            watcher.loop_stop()
            watcher.disconnect()
        lg.stop()


def send_commands(port, topic, bodies):
    """Publish each body on `topic` as the logger's MQTT user, each sent before the next."""
    sender = paho.Client(paho.CallbackAPIVersion.VERSION2)
    sender.username_pw_set("logger", USERS["logger"])
    sender.connect("127.0.0.1", port)
    sender.loop_start()
    for body in bodies:
        sender.publish(topic, body, qos=1).wait_for_publish(5)
    sender.loop_stop()
    sender.disconnect()


def test_whole_game_through_the_broker_equals_replay(tmp_path, broker):
    events = random_game("ddbu", 13, length=24, distance=(30, 30))
    timeline, script = build("ddbu", events, distance=(30, 30))
    expected = replay(tmp_path, script)
    with on_the_network(tmp_path, broker.port, "t1") as run:
        proc = sim(tmp_path, timeline, run.cfg, "--rules", "ddbu", "--distance", "30")
        ended_with(run.lg, proc.returncode, proc.stdout, proc.stderr, expected, broker.log())
    check_store(run.db, expected)


def test_broker_killed_and_restarted_mid_game(tmp_path, broker):
    shots = [Shot(pins=(1,)), Shot(pins=(2, 3)), Shot(), Shot(pins=(4,), carom="carom"),
             Shot(pins=(1, 5)), Shot(), Shot(pins=(2,)), Shot(pins=(3,))]
    timeline, script = build("ddbu", shots, distance=(40, 40), gap_ms=2500)
    expected = replay(tmp_path, script)
    with on_the_network(tmp_path, broker.port, "t2") as run:
        lg = run.lg
        proc = run.start(timeline, "--speed", "3")
        # Kill the broker once the logger has the second shot; bring it back 2 s later.
        assert lg.wait(lambda: (lg.logger.last_state or {}).get("shots", 0) >= 2, 30)
        broker.kill()
        time.sleep(2.0)
        broker.start()
        out, err = proc.communicate(timeout=120)
        ended_with(lg, proc.returncode, out, err, expected, broker.log())
        assert lg.source.connects >= 2  # the logger came back too
    check_store(run.db, expected)


def test_network_drops_and_returns(tmp_path, broker):
    shots = [Shot(pins=(1,)), Shot(pins=(2,)), Shot(pins=(3,)), Shot(pins=(4, 5)),
             Shot(pins=(1,), carom="carom"), Shot(), Shot(pins=(2,))]
    timeline, script = build("ddbu", shots, distance=(40, 40))
    # The WiFi goes away after the second shot and comes back before the last one:
    # three shots are scored while the board is off the network.
    lines = timeline.splitlines()
    timeline = "\n".join(lines + ["11500 net down", "27500 net up"])
    timeline = "\n".join(sorted(timeline.splitlines(), key=_time_of)) + "\n"
    expected = replay(tmp_path, script)
    with on_the_network(tmp_path, broker.port, "t3", watch="pinboard/t3/status") as run:
        # on the heap a board with its code frozen has left (docs/performance.md)
        proc = sim(tmp_path, timeline, run.cfg, "--heapsize", "4M", "--heap-budget", "32K")
        ended_with(run.lg, proc.returncode, proc.stdout, proc.stderr, expected, broker.log())
    check_store(run.db, expected)
    statuses = [payload.split()[0] for payload in run.seen]
    assert b"offline" in statuses  # the last will, when the board dropped off
    assert statuses.count(b"online") >= 2  # and back


def _time_of(line):
    words = line.split("#", 1)[0].split()
    return int(words[0]) if words and words[0].isdigit() else -1


def _watch(port, topic, seen, user="logger", topics=False):
    client = paho.Client(paho.CallbackAPIVersion.VERSION2)
    client.username_pw_set(user, USERS[user])
    ready = threading.Event()

    def connected(c, userdata, flags, reason, properties):
        c.subscribe(topic)

    client.on_connect = connected
    client.on_subscribe = lambda *a: ready.set()
    client.on_message = lambda c, u, m: seen.append((m.topic, m.payload) if topics else m.payload)
    client.connect("127.0.0.1", port)
    client.loop_start()
    assert ready.wait(10)
    return client


def test_duplicated_and_retained_messages(tmp_path, broker):
    shots = [Shot(pins=(1,)), Shot(pins=(2, 3)), Shot(pins=(4,))]
    timeline, script = build("ddbu", shots, distance=(40, 40))
    expected = replay(tmp_path, script)
    captured = []
    watcher = _watch(broker.port, "pinboard/t4/events", captured)
    cfg = board_cfg(tmp_path / "board.cfg", broker.port, "t4")
    proc = sim(tmp_path, timeline, cfg)
    assert proc.returncode == 0, proc.stderr
    time.sleep(0.5)
    watcher.loop_stop()
    watcher.disconnect()
    assert captured
    # A logger that starts after the game gets the board's state from the broker
    # (retained), then every event again, twice (a redelivering broker, a replaying
    # attacker with the board's password): nothing changes, the copies are counted.
    db = tmp_path / "late.db"
    lg = LoggerThread(broker.port, db)
    try:
        assert lg.wait(lambda: lg.logger.last_state == expected), broker.log()
        twin = paho.Client(paho.CallbackAPIVersion.VERSION2)
        twin.username_pw_set("t4", USERS["t4"])
        twin.connect("127.0.0.1", broker.port)
        twin.loop_start()
        for _ in range(2):
            for payload in captured:
                twin.publish("pinboard/t4/events", payload, qos=1).wait_for_publish(5)
        # the second round at least is all copies (the first may hold heartbeats newer
        # than the retained state)
        assert lg.wait(lambda: lg.source.duplicates >= len(captured))
        twin.loop_stop()
        twin.disconnect()
        time.sleep(0.3)
        assert lg.logger.last_state == expected
    finally:
        lg.stop()
    games = export(db)
    assert len(games) == 1 and games[0]["final"] == expected


def test_forged_replayed_and_garbled_commands_are_refused(tmp_path, broker):
    shots = [Shot(pins=(1,)), Shot(pins=(2, 3))]
    timeline, script = build("ddbu", shots, distance=(40, 40))
    timeline += "15000 pins up 1 2 3 4 5\n"  # time for the commands: the board idles on
    expected = replay(tmp_path, script)
    with on_the_network(tmp_path, broker.port, "t5", watch="pinboard/t5/#", topics=True) as run:
        lg, seen = run.lg, run.seen
        proc = run.start(timeline, "--speed", "4")
        assert lg.wait(lambda: (lg.logger.last_state or {}).get("shots", 0) >= 2, 60)
        status = [p for t, p in seen if t == "pinboard/t5/status"]
        nonce = bytes.fromhex(status[-1].split()[1].decode())
        new_game = host_frames.encode(host_frames.CMD_NEW_GAME, 900,
                                      host_frames.new_game_args("ceb", (50, 50), 1, 2))
        ping = host_frames.encode(host_frames.CMD_PING, 901)
        counter = time.time_ns() // 1000 + 10**9
        valid_ping = sign(KEYS["t5"], nonce, "t5", counter, ping)
        attacks = [
            sign(KEYS["t6"], nonce, "t5", counter + 1, new_game),  # another board's key
            sign(KEYS["t5"], b"\0" * 8, "t5", counter + 2, new_game),  # an old boot's nonce
            sign(KEYS["t5"], nonce, "t6", counter + 3, new_game),  # signed for another board
            new_game,  # no signature at all
            b"\x00garbage\xff" * 3,
            sign(KEYS["t5"], nonce, "t5", counter + 4, new_game)[:-1],  # cut short
        ]
        # the ping, the attacks, and the ping replayed twice
        send_commands(broker.port, "pinboard/t5/cmd",
                      [valid_ping] + attacks + [valid_ping, valid_ping])
        out, err = proc.communicate(timeout=120)
        ended_with(lg, proc.returncode, out, err, expected)  # the game was not touched
        refused = len(attacks) + 2

        def reported():
            rows = lg.logger.store.db.execute(
                "SELECT detail FROM errors WHERE code=63").fetchall()
            return rows and max(int(r[0]) for r in rows) == refused

        assert lg.wait(reported, 10), lg.logger.store.db.execute(
            "SELECT code, ref, detail FROM errors").fetchall()
        reader = host_frames.FrameReader()
        acks = [body for t, p in list(seen) if t == "pinboard/t5/events"
                for kind, _, body in reader.feed(p) if kind == host_frames.ACK]
        assert acks.count(bytes((901 & 0xFF, 901 >> 8, host_frames.CMD_PING))) == 1
    check_store(run.db, expected)


def test_restore_lost_hands_a_board_its_lost_events_over_mqtt(tmp_path, broker):
    shots = [Shot(pins=(1,)), Shot(pins=(2, 3)), Shot(), Shot(pins=(4,)), Shot(pins=(5,))]
    timeline, script = build("ddbu", shots, distance=(40, 40))
    expected = replay(tmp_path, script)
    state = tmp_path / "state"
    said = []
    with on_the_network(tmp_path, broker.port, "t2", restore_lost=True,
                        say=said.append) as run:
        lg, cfg = run.lg, run.cfg
        proc = sim(tmp_path, timeline, cfg, "--state", str(state))
        ended_with(lg, proc.returncode, proc.stdout, proc.stderr, expected, broker.log())
        # The board restarts with the last two events gone from its flash: the logger
        # hands them back, one signed RESTORE at a time, over the broker.
        assert device_value("micropython", "net_cases", "cut_journal",
                            str(state / "flash.img"), 3) == [3, 3]
        proc = sim(tmp_path, "20000 pins up 1 2 3 4 5\n", cfg, "--state", str(state),
                   "--speed", "4")
        ended_with(lg, proc.returncode, proc.stdout, proc.stderr, expected, said)
        assert lg.wait(lambda: any("every lost event is back" in s for s in said)), said
    assert any("came back from the board with 3 events; 5 stored" in s for s in said), said
    game = check_store(run.db, expected)
    assert game["losses"] == 1 and game["lost_events"] == 0 and game["complete"]


@pytest.mark.parametrize("wrong, code", [
    ({"password": "not-the-club-password"}, 71),
    ({"ssid": "next-door"}, 71),
    ({"port": "closed"}, 72),
    ({"pass": "wrong-password"}, 73),
])
def test_wrong_settings_show_err_and_play_goes_on(tmp_path, broker, wrong, code):
    shots = [Shot(pins=(1,)), Shot(pins=(2, 3)), Shot(), Shot(pins=(4,))]
    timeline, script = build("ddbu", shots, distance=(40, 40))
    expected = replay(tmp_path, script)
    if wrong.get("port") == "closed":
        wrong = {"port": broker_tool.free_port()}
    cfg = board_cfg(tmp_path / "board.cfg", broker.port, "t6", **wrong)
    proc = sim(tmp_path, timeline, cfg, "--display-log")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == expected  # the game is scored as ever, no reset
    shown = [line for line in proc.stderr.splitlines() if line.startswith("display ")]
    assert any(line.endswith("[Err   %d]" % code) for line in shown), shown
    assert not any("rSt" in line for line in shown[1:])  # one boot only


def test_an_idle_connected_poll_allocates_nothing(broker):
    assert device_value("micropython", "net_cases", "idle_poll_alloc", broker.port, "t1",
                        USERS["t1"]) == 0


def test_the_network_link_keeps_room_in_its_attribute_table(broker):
    # docs/performance.md, "Attribute tables with room": its 97 names filled a table of
    # 97, searched whole at every call of one of its methods (each frame's, each poll's)
    names = device_value("micropython", "net_cases", "connected_attributes", broker.port,
                         "t1", USERS["t1"])
    assert names > 90 and table_room(names) is None, table_room(names)


def test_a_connection_without_room_is_tried_again_and_reuses_the_links_buffers(broker):
    """No room for the connection (MemoryError on the way up, as on a board whose heap is
    in pieces) fails that attempt with Err 76 (the board's memory, not the broker) and the
    back-off, never a poll (which would starve the watchdog); once there is room the link
    comes up, and every connection's stream uses the buffers the link made once at
    power-up (a reconnection needs no 1 KB block)."""
    errors, states, up, on_buffers = device_value(
        "micropython", "net_cases", "connect_without_room", broker.port, "t1", USERS["t1"])
    assert errors == [76, 76, 76]
    assert states == [6]  # WAIT: the back-off (boardlib/netstream.py)
    assert up and on_buffers == [True, True]


def test_no_room_to_look_the_brokers_name_up_is_err_76_not_a_dns_failure(broker):
    """The broker named: a lookup whose resolver finds no room in the heap reports Err 76
    (the board's memory), not Err 75 (the name, the DNS server), which sends a builder to
    the club's network; a refusal by the DNS server is Err 75. Each failed lookup lets its
    module go, and once a lookup answers the link comes up."""
    errors, left, up = device_value("micropython", "net_cases", "look_up_without_room",
                                    broker.port, "t1", USERS["t1"])
    assert errors == [76, 75]
    assert left == [False, False]
    assert up


def test_a_wifi_driver_that_does_not_start_leaves_the_board_playing_and_is_tried_again(broker):
    """`WLAN.active(True)` raising (ESP_ERR_NO_MEM: the GC heap has grown into the ESP-IDF
    heap the WiFi driver needs, docs/esp32.md) no longer stops the board at power-up (it
    left it at the REPL, no game): the link is made, its join starts the driver again and
    says why it could not, Err 76 for no room and Err 71 for another failure, and once
    the driver starts the link comes up."""
    errors, up = device_value("micropython", "net_cases", "wifi_driver_without_room",
                              broker.port, "t1", USERS["t1"])
    assert errors == [76, 71]
    assert up


@pytest.fixture
def tls_broker(tmp_path):
    """The broker with a TLS listener too, its certificate from a CA made here by openssl;
    and a second CA, which the broker's certificate is not from."""
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed (.ci/run installs it): no test certificates")
    certs, other = tmp_path / "certs", tmp_path / "other-ca"
    certs.mkdir()
    other.mkdir()
    broker_tool.make_certificates(str(certs))
    broker_tool.make_certificates(str(other))
    tls_port = broker_tool.free_port()
    with broker_tool.Mosquitto(str(tmp_path / "broker"), USERS, BOARDS,
                               extra=broker_tool.tls_listener_text(str(certs), tls_port)) as b:
        b.tls_port, b.ca, b.other_ca = tls_port, certs / "ca.der", other / "ca.der"
        yield b


def test_tls_checks_the_brokers_certificate_and_takes_a_record_a_poll(tls_broker):
    b = tls_broker
    seen = []
    watcher = _watch(b.port, "pinboard/t1/status", seen)  # the plain listener, as the logger
    try:
        where, error, connects, polls, records, most, idle_alloc, ways, held = device_value(
            "micropython", "net_cases", "tls_connect", b.tls_port, str(b.ca), "t1", USERS["t1"])
        assert (where, error, connects) == ("up", 0, 1), b.log()
        assert idle_alloc == 0  # connected over TLS and idle, a poll allocates nothing
        # the way up's modules one at a time (docs/performance.md, "The TLS handshake's
        # code only while it runs"), and once up the gate alone of TLS's code
        assert ways == 1
        assert held == ["boardlib.netgate", "boardlib.netstream"], held
        # ServerHello, Certificate, ServerHelloDone, ChangeCipherSpec, Finished: mbedtls got
        # each in a poll of its own, never the broker's whole answer at once
        assert records >= 5 and most == 1 and polls >= records
        deadline = time.monotonic() + 10
        while not any(p.startswith(b"online ") for p in seen) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert any(p.startswith(b"online ") for p in seen), seen  # through TLS, to the logger
    finally:
        watcher.loop_stop()
        watcher.disconnect()
    # a broker whose certificate is not from the board's CA, and a board without a CA file:
    # Err 74, no connection
    assert device_value("micropython", "net_cases", "tls_connect", b.tls_port,
                        str(b.other_ca), "t1", USERS["t1"])[:3] == ["wait", 74, 0]
    no_ca = device_value("micropython", "net_cases", "tls_connect", b.tls_port, None, "t1",
                         USERS["t1"])
    assert no_ca[:3] == ["wait", 74, 0] and no_ca[4:7] == [0, 0, None]  # no record read


def test_no_room_for_the_tls_handshakes_code_is_err_76_and_tried_again(tls_broker):
    """The handshake's module is loaded by the link when the TCP connection is up: no room
    for it ends that attempt with Err 76 (no memory for TLS) and closes the connection,
    never a poll; the next attempts, after the back-off, come up."""
    b = tls_broker
    errors, left_open, up = device_value(
        "micropython", "net_cases", "tls_handshake_without_room", b.tls_port, str(b.ca), "t1",
        USERS["t1"])
    assert errors == [76, 76]
    assert left_open == [False, False]
    assert up


def test_a_handshake_unanswered_for_want_of_the_esp_idf_heap_is_err_76(tls_broker):
    """The WiFi driver copies each frame it receives into a block of the ESP-IDF heap as
    large (docs/esp32.md, "The radio"): a board whose GC heap has grown into all but a few
    hundred bytes of it never hears the broker's handshake. That is Err 76 (the board's
    memory), not Err 72 (the broker), which would send a builder to the club's network;
    with a block for a frame, or on a board that is no ESP32, a broker that does not
    answer is Err 72."""
    ca = str(tls_broker.ca)
    assert device_value("micropython", "net_cases", "tls_handshake_unanswered", ca, 896) == 76
    assert device_value("micropython", "net_cases", "tls_handshake_unanswered", ca,
                        16384) == 72
    assert device_value("micropython", "net_cases", "tls_handshake_unanswered", ca,
                        None) == 72


def test_whole_game_over_tls_with_the_ca_on_the_boards_flash(tmp_path, tls_broker):
    # the board and the logger both on the TLS listener, each checking the broker's
    # certificate against the club's CA
    b = tls_broker
    shots = [Shot(pins=(1,)), Shot(pins=(2, 3)), Shot(), Shot(pins=(4,))]
    timeline, script = build("ddbu", shots, distance=(40, 40))
    expected = replay(tmp_path, script)
    with on_the_network(tmp_path, b.tls_port, "t2", net={"tls": True}, scheme="mqtts",
                        ca=str(b.ca.with_suffix(".crt"))) as run:
        proc = sim(tmp_path, timeline, run.cfg, "--ca", str(b.ca), "--display-log")
        ended_with(run.lg, proc.returncode, proc.stdout, proc.stderr, expected, b.log())
    check_store(run.db, expected)
    shown = [line for line in proc.stderr.splitlines() if line.startswith("display ")]
    assert not any("Err" in line for line in shown), shown


def test_acl_keeps_each_board_to_its_own_topics(broker):
    def client(user, password=None):
        c = paho.Client(paho.CallbackAPIVersion.VERSION2)
        c.username_pw_set(user, USERS.get(user) if password is None else password)
        return c

    got = []
    spy = client("logger")
    spy.on_message = lambda c, u, m: got.append((m.topic, m.payload))
    spy.connect("127.0.0.1", broker.port)
    spy.subscribe("pinboard/#")
    spy.loop_start()
    board_cmds = []
    t1 = client("t1")
    t1.on_message = lambda c, u, m: board_cmds.append(m.topic)
    t1.connect("127.0.0.1", broker.port)
    t1.subscribe("pinboard/+/cmd")
    t1.loop_start()
    time.sleep(0.5)
    t1.publish("pinboard/t1/events", b"mine", qos=1).wait_for_publish(5)
    t1.publish("pinboard/t2/events", b"forged", qos=1).wait_for_publish(5)
    t1.publish("pinboard/t1/cmd", b"self-command", qos=1).wait_for_publish(5)
    spy.publish("pinboard/t1/cmd", b"for t1", qos=1).wait_for_publish(5)
    spy.publish("pinboard/t2/cmd", b"for t2", qos=1).wait_for_publish(5)
    spy.publish("pinboard/t1/state", b"logger forging a state", qos=1).wait_for_publish(5)
    time.sleep(0.5)
    for c in (spy, t1):
        c.loop_stop()
        c.disconnect()
    assert ("pinboard/t1/events", b"mine") in got
    assert ("pinboard/t2/events", b"forged") not in got
    assert ("pinboard/t1/cmd", b"self-command") not in got
    assert ("pinboard/t1/state", b"logger forging a state") not in got
    assert board_cmds == ["pinboard/t1/cmd"]  # t1 reads its own commands, not t2's

    stranger = client("nobody", "guess")
    stranger.connect("127.0.0.1", broker.port)
    stranger.loop_start()
    time.sleep(0.5)
    assert not stranger.is_connected()  # no anonymous or unknown users
    stranger.loop_stop()


def test_club_broker_bridged_to_a_central_broker(tmp_path):
    """docs/scaling.md's federation: the club's broker bridges its boards' topics to the
    central broker under clubs/<club>/, where a central logger stores the game too."""
    shots = [Shot(pins=(1,)), Shot(pins=(2, 3)), Shot(), Shot(pins=(4,))]
    timeline, script = build("ddbu", shots, distance=(40, 40))
    expected = replay(tmp_path, script)
    central = broker_tool.Mosquitto(
        str(tmp_path / "central"), {"central": "central-pw", "berlin": "berlin-pw"}, [],
        acl=broker_tool.central_acl_text(["berlin"]))
    central.start()
    club = broker_tool.Mosquitto(
        str(tmp_path / "club"), USERS, BOARDS,
        extra=broker_tool.bridge_text("berlin", "127.0.0.1:%d" % central.port, "berlin",
                                      "berlin-pw"))
    club.start()
    # the central logger proves the boards' frames with their keys (it never commands)
    source = MqttSource("mqtt://central:central-pw@127.0.0.1:%d" % central.port,
                        prefix="clubs/+/", keys=KEYS)
    lg = Logger([], str(tmp_path / "central.db"), mqtt=source)
    thread = threading.Thread(target=lg.run_forever, daemon=True)
    thread.start()
    try:
        time.sleep(1.0)  # the bridge is up
        cfg = board_cfg(tmp_path / "board.cfg", club.port, "t1")
        proc = sim(tmp_path, timeline, cfg)
        assert proc.returncode == 0, proc.stderr
        deadline = time.monotonic() + 20
        while lg.last_state != expected and time.monotonic() < deadline:
            time.sleep(0.05)
        assert lg.last_state == expected, club.log() + central.log()
    finally:
        lg.stop()
        thread.join(10)
        lg.close()
        club.stop()
        central.stop()
    check_store(tmp_path / "central.db", expected)


def test_serial_port_and_broker_logged_together(tmp_path, broker):
    """--port and --mqtt combine: one board with both links, one logger, both stored."""
    from tools.port import upy
    from tools.port.linkpipe import LinkPipe

    shots = [Shot(pins=(1,)), Shot(pins=(2, 3)), Shot(pins=(5,), carom="carom")]
    timeline, script = build("ddbu", shots, distance=(40, 40))
    expected = replay(tmp_path, script)
    (tmp_path / "g.timeline").write_text(timeline)
    cfg = board_cfg(tmp_path / "board.cfg", broker.port, "t1")
    with LinkPipe() as pipe:
        source = MqttSource("mqtt://logger:%s@127.0.0.1:%d" % (USERS["logger"], broker.port),
                            keys=KEYS)
        lg = Logger([pipe.host_path], str(tmp_path / "games.db"), mqtt=source)
        thread = threading.Thread(target=lg.run_forever, daemon=True)
        thread.start()
        try:
            proc = upy.run_file(upy.entry("board"), [
                "--timeline", str(tmp_path / "g.timeline"), "--config", cfg,
                "--link", pipe.device_path, "--state", str(tmp_path / "flash")],
                heapsize="8M", timeout=120)
            assert proc.returncode == 0, proc.stdout + proc.stderr
            deadline = time.monotonic() + 20
            stored = []
            while time.monotonic() < deadline:
                stored = [row[0] for row in lg.store.db.execute(
                    "SELECT final FROM games").fetchall()]
                if len(stored) == 2 and all(json.loads(f) == expected for f in stored):
                    break
                time.sleep(0.1)
        finally:
            lg.stop()
            thread.join(10)
            lg.close()
    assert [json.loads(f) for f in stored] == [expected, expected]
    ports = {row[0] for row in sqlite3.connect(tmp_path / "games.db").execute(
        "SELECT port FROM link_stats")}
    assert ports == {pipe.host_path, "mqtt:t1"}


@pytest.mark.parametrize("args, message", [
    (["--db", "x.db"], "give --port, --mqtt or both"),
    (["--mqtt", "http://host", "--db", "x.db"], "expected mqtt://"),
    (["--mqtt", "mqtt://h:99999", "--db", "x.db"], "bad port"),
])
def test_logger_command_line_checks_mqtt_arguments(tmp_path, args, message):
    out = subprocess.run([sys.executable, "-m", "tools.logger", *args], capture_output=True,
                         text=True, timeout=60, cwd=tmp_path,
                         env=dict(os.environ, PYTHONPATH=ROOT))
    assert out.returncode == 2
    assert message in out.stderr


@pytest.mark.parametrize("rules, teams", [("ddbu", 0), ("ceb", 1)])
def test_signed_new_game_is_played_and_a_reconnection_keeps_the_games_apart(tmp_path,
                                                                              broker,
                                                                              rules, teams):
    """A correctly signed NEW_GAME from the club's host starts a new game (also a ceb match
    of two-man teams: the TEAMS flag); the WiFi then drops before its first shot, and the
    shots sent again on return are the new game's (none), not the old game's: the store
    has exactly the two games."""
    first_part, first_script = build("ddbu", [Shot(pins=(1,)), Shot(pins=(2, 3))])
    second_part, second_script = build(rules, [Shot(pins=(4,)), Shot(pins=(1, 5))],
                                       distance=(30, 30), first=2, start_ms=40000,
                                       teams=teams)
    timeline = first_part + "24000 net down\n30000 net up\n" + "".join(
        line + "\n" for line in second_part.splitlines()[1:])
    expected_first = replay(tmp_path, first_script)
    expected = replay(tmp_path, second_script)
    with on_the_network(tmp_path, broker.port, "t2", watch="pinboard/t2/status") as run:
        lg = run.lg
        proc = run.start(timeline, "--speed", "4")
        assert lg.wait(lambda: lg.logger.last_state == expected_first, 60)
        nonce = bytes.fromhex(run.seen[-1].split()[1].decode())
        # REPLACE: the host says so (without it, the players would be asked first)
        frame = host_frames.encode(host_frames.CMD_NEW_GAME, 7,
                                   host_frames.new_game_args(rules, (30, 30), 1, 2,
                                                             replace=True, teams=teams))
        send_commands(broker.port, "pinboard/t2/cmd",
                      [sign(KEYS["t2"], nonce, "t2", time.time_ns(), frame)])
        out, err = proc.communicate(timeout=120)
        ended_with(lg, proc.returncode, out, err, expected)
        assert (expected["members"] is not None) == bool(teams)
    games = export(run.db)
    assert [g["final"] for g in games] == [expected_first, expected]
    assert [len(g["shots"]) for g in games] == [2, 2]


def test_tls_writes_that_push_back_lose_nothing(tmp_path):
    """A TLS connection whose socket pushes back (the broker's side reads nothing for a
    while, the board's send buffer is small): every byte the link queued behind a record
    mbedtls had begun arrives, in order (docs/network.md, "TLS")."""
    import socket
    import ssl

    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed (.ci/run installs it): no test certificates")
    paths = broker_tool.make_certificates(str(tmp_path))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(paths["server.crt"], paths["server.key"])
    context.set_ciphers("AES128-GCM-SHA256")  # the board's one suite (RSA key exchange)
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 2048)
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    got = bytearray()

    def serve():
        conn, _ = server.accept()
        with context.wrap_socket(conn, server_side=True) as tls:
            time.sleep(1.5)  # the radio is busy: the board's buffers fill
            while True:
                data = tls.recv(65536)
                if not data:
                    return
                got.extend(data)
                time.sleep(0.01)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    packets, size = 400, 120
    pushed_back, written, left = device_value(
        "micropython", "net_cases", "tls_backpressure", server.getsockname()[1],
        paths["ca.der"], packets, size)
    thread.join(20)
    server.close()
    assert (written, left) == (packets, 0)
    assert pushed_back > 0  # the socket did push back, mid-record
    expected = b"".join(b"%06d" % i + b"." * (size - 6) for i in range(packets))
    assert len(got) == len(expected) and bytes(got) == expected
