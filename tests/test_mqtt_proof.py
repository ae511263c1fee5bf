"""Board frames proven on the club's network (docs/network.md, "Frames proven"): the real
firmware on the simulated board, a real Mosquitto with the club's ACL, the real logger;
an attacker with another board's broker password, that board's key too, a board's own
password, recordings of what a board sent, a board's previous boot. Skipped, saying why,
where no mosquitto is installed.
"""

import json
import os
import sqlite3
import time

import paho.mqtt.client as paho
import pytest
from test_mqtt import (
    KEYS,
    USERS,
    LoggerThread,
    board_cfg,
    check_store,
    ended_with,
    on_the_network,
    replay,
    sim,
)

from boardlib import link
from boardlib.framesign import OVERHEAD, FrameSigner
from rules_core import Game
from rules_core.snapshot import pack_state
from tools import linkcodes
from tools.board import broker as broker_tool
from tools.sim.timelines import Shot, build

pytestmark = [
    pytest.mark.skipif(broker_tool.available() is not None, reason=str(broker_tool.available())),
    pytest.mark.long(7),
    pytest.mark.waits,
]


@pytest.fixture
def broker(tmp_path):
    with broker_tool.Mosquitto(str(tmp_path / "broker"), USERS, list(KEYS)) as b:
        yield b


class Forger:
    """Board frames made by boardlib.link itself, as a board named `board_id` makes them,
    published with a broker account's password; sealed when given a key."""

    def __init__(self, port, user, board_id, key=None):
        self.frames = []
        self.link = link.Link(self, 0, board_id=board_id.encode())
        self.link.game = 1
        self.nonce = os.urandom(8)
        self.signer = None if key is None else FrameSigner(key, self.nonce, user.encode())
        self.counter = 0
        self.user = user
        self.client = paho.Client(paho.CallbackAPIVersion.VERSION2)
        self.client.username_pw_set(user, USERS[user])
        self.client.connect("127.0.0.1", port)
        self.client.loop_start()

    def write(self, wire):
        self.frames.append(bytes(wire))
        return len(wire)

    def readinto(self, buf):
        return 0

    def publish(self, topic_board=None):
        """Every frame made so far, on pinboard/<topic_board or user>/; the status first."""
        base = "pinboard/%s/" % (topic_board or self.user)
        sent = [self.client.publish(base + "status", b"online " + self.nonce.hex().encode(),
                                    qos=1)]
        for wire in self.frames:
            topic = base + ("state" if wire[2] == linkcodes.STATE else "events")
            if self.signer is not None:
                message = bytearray(len(wire) + OVERHEAD)
                self.signer.seal(self.counter, wire, message)
                self.counter += 1
                wire = bytes(message)
            sent.append(self.client.publish(topic, wire, qos=1))
        self.frames.clear()
        for info in sent:
            info.wait_for_publish(5)
        return len(sent) - 1

    def close(self):
        self.client.loop_stop()
        self.client.disconnect()


def publish_raw(port, user, messages):
    client = paho.Client(paho.CallbackAPIVersion.VERSION2)
    client.username_pw_set(user, USERS[user])
    client.connect("127.0.0.1", port)
    client.loop_start()
    for topic, payload in messages:
        client.publish(topic, payload, qos=1).wait_for_publish(5)
    client.loop_stop()
    client.disconnect()
    return len(messages)


def counters(db, port):
    row = sqlite3.connect(db).execute(
        "SELECT unsigned, wrong_board, repeated, old_boot, no_key FROM link_stats "
        "WHERE port=?", (port,)).fetchone()
    return dict(zip(("unsigned", "wrong_board", "repeated", "old_boot", "no_key"),
                    row or (0, 0, 0, 0, 0), strict=True))


def forged_game():
    """A game that says player 1 has 190 (the issue's forged score)."""
    game = Game("ddbu", (200, 200))
    game.adjust(1, 190)
    return game


def test_frames_are_taken_only_from_the_board_the_topic_and_key_name(tmp_path, broker,
                                                                      hostile_report):
    shots = [Shot(pins=(1,)), Shot(pins=(2, 3)), Shot(), Shot(pins=(4,)), Shot(pins=(5,))]
    timeline, script = build("ddbu", shots, distance=(40, 40), gap_ms=2500)
    timeline += "20000 pins up 1 2 3 4 5\n"  # the board idles on while it is attacked
    expected = replay(tmp_path, script)
    attempts = {}
    with on_the_network(tmp_path, broker.port, "t1", watch="pinboard/t1/#",
                        topics=True) as run:
        lg = run.lg
        proc = run.start(timeline, "--speed", "4")
        assert lg.wait(lambda: (lg.logger.last_state or {}).get("shots", 0) >= 2, 60)
        recorded = list(run.seen)
        t1_game = lg.logger.store.db.execute("SELECT game_id FROM games").fetchone()[0]
        # 1. Table 2's password alone (the issue's attack): a hello naming board t1 and a
        #    state of t1's game with player 1 at 190, on table 2's topics, unsealed.
        forger = Forger(broker.port, "t2", "t1")
        forger.link.send_hello("2.0", "PWR", 0)
        forger.link.game_id[:] = bytes.fromhex(t1_game)
        game = forged_game()
        forger.link.send_state(pack_state(game), 0, game.history)
        attempts["unsealed_other_board"] = forger.publish()
        forger.close()
        # 2. Table 2's key too (a board taken apart): the same, sealed by t2.
        forger = Forger(broker.port, "t2", "t1", key=KEYS["t2"])
        forger.link.send_hello("2.0", "PWR", 0)
        forger.link.game_id[:] = bytes.fromhex(t1_game)
        forger.link.send_state(pack_state(game), 0, game.history)
        attempts["sealed_by_t2_naming_t1"] = forger.publish()
        forger.close()
        # 3. What t1 sent, again, with t1's own password (a recording of the club's
        #    network, or the board's account); 4. the same on table 2's topics.
        again = [(topic, payload) for topic, payload in recorded
                 if not topic.endswith("/status")]
        attempts["t1_replayed"] = publish_raw(broker.port, "t1", again)
        attempts["t1_on_t2"] = publish_raw(
            broker.port, "t2", [(t.replace("/t1/", "/t2/"), p) for t, p in again])
        # 5. A status with a nonce of the attacker's, then a message far too long (the
        #    broker's packet limit, 4096 bytes, stops anything longer before the logger), and
        #    a sealed message cut short.
        attempts["junk_on_t1"] = publish_raw(broker.port, "t1", [
            ("pinboard/t1/status", b"online " + os.urandom(8).hex().encode()),
            ("pinboard/t1/events", os.urandom(4000)),
            ("pinboard/t1/events", again[-1][1][:-1])])
        # the board's boot, not the attacker's nonce, is what commands are signed with
        nonce = [p.split()[1] for t, p in recorded if t.endswith("/status")][-1]
        assert lg.wait(lambda: counters(str(run.db), "mqtt:t1")["unsigned"] >= 2, 20)
        assert lg.source.nonce("t1").hex().encode() == nonce
        # 6. A flood: 500 messages of the right length with random tags, while the board
        #    plays on.
        flood = [("pinboard/t1/events", again[-1][1][:-10] + os.urandom(10))
                 for _ in range(500)]
        attempts["flood"] = publish_raw(broker.port, "t1", flood)
        assert lg.wait(lambda: counters(str(run.db), "mqtt:t1")["unsigned"] >= 502, 30)
        out, err = proc.communicate(timeout=120)
        # every real state after the attacks taken: the game ends as the board played it
        ended_with(lg, proc.returncode, out, err, expected)
        time.sleep(0.3)
    db = str(run.db)
    t1, t2 = counters(db, "mqtt:t1"), counters(db, "mqtt:t2")
    assert t1["repeated"] >= len(again) - 1  # (a retained state may come twice)
    assert t1["unsigned"] == 502  # the long one, the cut one, the flood; not the status
    assert t2["wrong_board"] == 1  # the sealed hello naming t1
    assert t2["unsigned"] == attempts["unsealed_other_board"] + attempts["t1_on_t2"]
    boards = [row[0] for row in sqlite3.connect(db).execute("SELECT key FROM boards")]
    # t1's game is the board's, shot for shot; t2's word stays t2's
    games = sqlite3.connect(db).execute(
        "SELECT b.key, g.game_id FROM games g JOIN boards b ON b.id = g.board").fetchall()
    assert [g for g in games if g[0] == b"t1".hex()] == [(b"t1".hex(), t1_game)]
    assert set(boards) <= {b"t1".hex(), b"t2".hex()}
    t1_final = sqlite3.connect(db).execute(
        "SELECT final FROM games g JOIN boards b ON b.id = g.board WHERE b.key=?",
        (b"t1".hex(),)).fetchone()[0]
    assert json.loads(t1_final) == expected
    if len(games) == 1:
        check_store(run.db, expected)
    refused = sum(t1.values()) + sum(t2.values())
    hostile_report("network: forged, replayed and foreign board frames",
                   sent=sum(attempts.values()), refused=refused, games_changed=0)


def test_a_boot_the_board_left_is_never_taken_again(tmp_path, broker, hostile_report):
    """The board restarts (a new nonce); what it sent in its previous boot, replayed with
    its own password, is refused, however new its counters look."""
    shots = [Shot(pins=(1,)), Shot(pins=(2, 3))]
    timeline, script = build("ddbu", shots, distance=(40, 40))
    expected = replay(tmp_path, script)
    state = tmp_path / "flash"
    with on_the_network(tmp_path, broker.port, "t3", watch="pinboard/t3/#",
                        topics=True) as run:
        proc = sim(tmp_path, timeline, run.cfg, "--state", str(state))
        ended_with(run.lg, proc.returncode, proc.stdout, proc.stderr, expected)
        first_boot = [(t, p) for t, p in run.seen if not t.endswith("/status")]
        proc = sim(tmp_path, "3000 pins up 1 2 3 4 5\n", run.cfg, "--state", str(state))
        ended_with(run.lg, proc.returncode, proc.stdout, proc.stderr, expected)
        lg = run.lg
        before = counters(str(run.db), "mqtt:t3")
        sent = publish_raw(broker.port, "t3", first_boot)
        assert lg.wait(lambda: counters(str(run.db), "mqtt:t3")["old_boot"]
                       - before["old_boot"] >= sent - 1, 20), counters(str(run.db), "mqtt:t3")
        assert lg.logger.last_state == expected
        refused = counters(str(run.db), "mqtt:t3")["old_boot"] - before["old_boot"]
    # A logger started afresh on the same file knows the boot the board left, too.
    lg = LoggerThread(broker.port, run.db)
    try:
        assert lg.wait(lambda: "t3" in lg.source.proofs, 20)
        sent += publish_raw(broker.port, "t3", first_boot)
        assert lg.wait(lambda: lg.logger.mqtt.boards["t3"].counters["old_boot"]
                       >= len(first_boot) - 1, 20), lg.logger.mqtt.boards["t3"].counters
        refused += lg.logger.mqtt.boards["t3"].counters["old_boot"]
    finally:
        lg.stop()
    check_store(run.db, expected)
    hostile_report("network: a previous boot's frames replayed (and after a logger "
                   "restart)", sent=sent, refused=refused, games_changed=0)


def test_a_board_without_a_key_is_not_logged(tmp_path, broker):
    shots = [Shot(pins=(1,))]
    timeline, _ = build("ddbu", shots, distance=(40, 40))
    said = []
    cfg = board_cfg(tmp_path / "board.cfg", broker.port, "t4")
    lg = LoggerThread(broker.port, tmp_path / "games.db", say=said.append)
    lg.source.keys.pop("t4")
    try:
        proc = sim(tmp_path, timeline, cfg)
        assert proc.returncode == 0, proc.stderr
        assert lg.wait(lambda: counters(str(tmp_path / "games.db"), "mqtt:t4")["no_key"] > 0)
    finally:
        lg.stop()
    assert sqlite3.connect(tmp_path / "games.db").execute(
        "SELECT COUNT(*) FROM games").fetchone() == (0,)
    assert any("no key for this board" in line for line in said), said

