"""Network figures for `make bench`: a real Mosquitto on 127.0.0.1, the real logger.

    python -m tools.bench.net [--smoke] [--json]      # also part of python -m tools.bench

Two parts (docs/network.md, docs/scaling.md):

- **Poll gaps.** The simulated board (real firmware, real umqtt, its own loop, real time)
  plays while the broker is up, frozen (SIGSTOP: connections stay open, nothing is
  answered), killed (connections refused) and restarted. The longest step of the board's
  loop in each phase (a pin that changes during a step is seen when it ends: the longest
  the inputs can wait); target under 50 ms.
- **Scale.** N board-shaped publishers (the firmware's own frames: boardlib.link.Link and
  rules_core.Game, one MQTT connection each, paho-mqtt) against one broker and one
  `python -m tools.logger --mqtt` process writing SQLite. At each rate every board sends
  one shot (a SHOT and a STATE frame) per 1/rate s; a reader polls the database and takes
  the moment each shot's row is first visible (committed). Reported: frames per second
  the logger kept up with at zero loss and p99 publish-to-row under 250 ms, and the p99
  at the target (50 boards x 10 shots/s).
"""

import argparse
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time

from tools.board import broker as broker_tool
from tools.port import upy
from tools.sim.board.shots import LONG_SETTINGS

TARGET_BOARDS = 50
TARGET_RATE = 10  # shots a second per board
FULL = {"boards": TARGET_BOARDS, "rates": (10, 20, 40, 80), "seconds": 8, "phase_s": 3}
# --smoke (make test, through tools.bench --smoke): the scale part, small; the poll gaps
# need seconds of real time per broker phase and are measured by make bench only.
SMOKE = {"boards": 2, "rates": (5,), "seconds": 1, "phase_s": 0}
KEY = bytes(range(32))


class Unavailable(Exception):
    pass


def _users(boards):
    users = {"logger": "logger-pw"}
    for name in boards:
        users[name] = name + "-pw"
    return users


# -- poll gaps ------------------------------------------------------------------------------------

PHASES = ("up", "frozen", "down", "frozen_at_connect", "restarted")


def _device(cfg, seconds):
    return upy.popen([os.path.join(upy.ROOT, upy.entry("net_bench")), cfg,
                      str(seconds)], heapsize="8M", stdout=subprocess.PIPE,
                     stderr=subprocess.PIPE, text=True)


def _windows(lines):
    for line in lines:
        words = line.split()
        if len(words) == 4 and words[0] == "gap":
            yield int(words[1]), int(words[2]) / 1000, int(words[3]) / 1000


def baseline(seconds, workdir):
    """The same board and tasks without a `net` setting: what the port and the machine's
    load give by themselves (largest poll gap, longest link step, in ms)."""
    cfg = os.path.join(workdir, "nonet.cfg")
    with open(cfg, "w") as f:
        f.write("{}")
    proc = _device(cfg, seconds + 1)
    out, err = proc.communicate(timeout=seconds + 60)
    windows = [w for w in _windows(out.splitlines()) if w[0] >= 200]
    if not windows:
        raise Unavailable("the board did not run: %s" % err[-500:])
    return (max(w[1] for w in windows), max(w[2] for w in windows))


def poll_gaps(phase_s, workdir):
    """{phase: [largest poll gap, longest link step] in ms}, the broker in each state for
    phase_s s."""
    board = "gapbench"
    directory = os.path.join(workdir, "gap-broker")
    with broker_tool.Mosquitto(directory, _users([board]), [board]) as b:
        cfg = os.path.join(workdir, "gap.cfg")
        with open(cfg, "w") as f:
            json.dump({"net": {"ssid": "club", "password": "pinboard", "host": "127.0.0.1",
                               "port": b.port, "user": board, "pass": board + "-pw",
                               "key": KEY.hex(), "id": board}}, f)
        total = phase_s * len(PHASES) + 3
        proc = _device(cfg, total)
        lines = []
        reader = threading.Thread(target=lambda: lines.extend(proc.stdout), daemon=True)
        reader.start()
        deadline = time.monotonic() + 30
        while not lines and time.monotonic() < deadline:
            time.sleep(0.01)
        if not lines:
            proc.kill()
            raise Unavailable("the board did not start: %s" % proc.stderr.read()[-500:])
        t0 = time.monotonic()
        marks = [("up", 0.0)]

        def phase(name, action):
            action()
            marks.append((name, (time.monotonic() - t0) * 1000))

        time.sleep(phase_s + 1)  # the board joins and connects in the first second
        phase("frozen", b.pause)
        time.sleep(phase_s)
        phase("down", lambda: (b.resume(), b.kill()))
        time.sleep(phase_s)
        phase("frozen_at_connect", lambda: (b.start(), b.pause()))
        time.sleep(phase_s)
        phase("restarted", b.resume)
        try:
            proc.wait(timeout=total + 30)
        except subprocess.TimeoutExpired:
            proc.kill()
        reader.join(5)
    largest = {name: [0.0, 0.0] for name in PHASES}
    end = None
    for line in lines:
        if line.startswith("end"):
            end = line.strip()
    for at, gap_ms, link_ms in _windows(lines):
        name = None
        for phase_name, since in marks:
            if at - 100 >= since + 100:  # whole windows only, clear of the switch
                name = phase_name
        if name is not None:
            largest[name][0] = max(largest[name][0], round(gap_ms, 1))
            largest[name][1] = max(largest[name][1], round(link_ms, 1))
    if end is None:
        raise Unavailable("the board stopped early: %s" % proc.stderr.read()[-500:])
    return largest, end


# -- scale ----------------------------------------------------------------------------------------

class BoardPublisher:
    """One table: the firmware's Link and rules on CPython, publishing over its own
    MQTT connection what the board would."""

    def __init__(self, name, port):
        import paho.mqtt.client as paho

        from boardlib.framesign import FrameSigner
        from boardlib.link import Link
        from rules_core import Game

        self.name = name
        self.frames = []
        nonce = os.urandom(8)
        self.signer = FrameSigner(KEY, nonce, name.encode())  # sealed as the board seals
        self.counter = 0
        self.link = Link(self, 0, board_id=name.encode())
        self.link.game = 1
        self.game = Game(LONG_SETTINGS["rules"], LONG_SETTINGS["distance"])
        self.sent = {}  # shot number -> publish time
        self.client = paho.Client(paho.CallbackAPIVersion.VERSION2, client_id=name)
        self.client.username_pw_set(name, name + "-pw")
        self.client.will_set("pinboard/%s/status" % name, b"offline", retain=True)
        self.client.connect("127.0.0.1", port, 60)
        self.client.loop_start()
        self.base = "pinboard/%s/" % name
        self.client.publish(self.base + "status", b"online " + nonce.hex().encode(),
                            retain=True)
        self.link.send_hello("bench", "PWR", 0)
        self._flush()

    # the Link's stream
    def write(self, wire):
        self.frames.append(bytes(wire))
        return len(wire)

    def readinto(self, buf):
        return 0

    def _flush(self):
        from boardlib.framesign import OVERHEAD

        for wire in self.frames:
            state = wire[2] == 0x02
            message = bytearray(len(wire) + OVERHEAD)
            self.signer.seal(self.counter, wire, message)
            self.counter += 1
            self.client.publish(self.base + ("state" if state else "events"), bytes(message),
                                retain=state)
        self.frames.clear()

    def shot(self, now_ms):
        from rules_core.snapshot import pack_state

        game = self.game
        record = game.shot(pins=1 if game.shots % 3 else 0)
        self.link.send_event(game.history.count, record, game.last_player,
                             game.last_points, game.last_to, now_ms)
        self.link.send_state(pack_state(game), now_ms, game.history)
        self.sent[game.shots] = time.time()
        self._flush()

    def close(self):
        self.client.disconnect()
        self.client.loop_stop()


def _watch_rows(db, seen, stop):
    """Note when each (board, shot) row is first visible to a reader (it is committed)."""
    conn = None
    last = 0
    while not stop.is_set():
        if conn is None:
            try:
                conn = sqlite3.connect("file:%s?mode=ro" % db, uri=True, timeout=1)
                conn.execute("SELECT 1 FROM events LIMIT 1")
            except sqlite3.Error:
                conn = None
                time.sleep(0.02)
                continue
        try:
            rows = conn.execute(
                "SELECT e.rowid, b.key, e.number FROM events e JOIN games g ON g.id = e.game "
                "JOIN boards b ON b.id = g.board WHERE e.kind = 'event' AND e.rowid > ? "
                "ORDER BY e.rowid",
                (last,)).fetchall()
        except sqlite3.Error:
            rows = []
        now = time.time()
        for rowid, key, number in rows:
            seen.setdefault((key, number), now)
            last = max(last, rowid)
        time.sleep(0.005)
    if conn is not None:
        conn.close()


def scale_run(boards, rate, seconds, workdir):
    """One run: `boards` publishers at `rate` shots/s each for `seconds`."""
    names = ["b%02d" % i for i in range(boards)]
    directory = os.path.join(workdir, "scale-%d-%d" % (boards, rate))
    db = os.path.join(directory, "games.db")
    # the broker logs each login here (tools.board.broker leaves them out of a club's
    # log): the logger's is the sign that it is there before the first frame is sent
    with broker_tool.Mosquitto(directory, _users(names), names,
                               extra="connection_messages true\n") as b:
        keys = os.path.join(directory, "keys")
        with open(keys, "w") as f:
            for name in names:
                f.write("%s %s\n" % (name, KEY.hex()))
        logger = subprocess.Popen(
            [sys.executable, "-m", "tools.logger", "--mqtt",
             "mqtt://logger:logger-pw@127.0.0.1:%d" % b.port, "--db", db, "--keys", keys],
            cwd=upy.ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        seen = {}
        stop = threading.Event()
        watcher = threading.Thread(target=_watch_rows, args=(db, seen, stop), daemon=True)
        pubs = []
        try:
            deadline = time.monotonic() + 30
            while "u'logger'" not in b.log() and time.monotonic() < deadline:
                if logger.poll() is not None:
                    raise Unavailable("the logger stopped: %s" % logger.stderr.read()[-500:])
                time.sleep(0.05)
            if "u'logger'" not in b.log():
                raise Unavailable("the logger did not log in to the broker in 30 s")
            time.sleep(0.5)  # connected; its subscription follows at once
            pubs = [BoardPublisher(name, b.port) for name in names]
            watcher.start()
            time.sleep(0.5)
            period = 1.0 / rate
            start = time.monotonic()
            due = [start + i * period / boards for i in range(boards)]
            count = int(seconds * rate)
            done = [0] * boards
            late = 0.0
            while min(done) < count:
                i = min(range(boards), key=due.__getitem__)
                wait = due[i] - time.monotonic()
                if wait > 0:
                    time.sleep(wait)
                else:
                    late = max(late, -wait)
                if done[i] < count:
                    pubs[i].shot(int((time.monotonic() - start) * 1000))
                    done[i] += 1
                due[i] += period if done[i] < count else 1e9
            elapsed = time.monotonic() - start
            deadline = time.monotonic() + 10
            total = boards * count
            while len(seen) < total and time.monotonic() < deadline:
                time.sleep(0.05)
        finally:
            stop.set()
            for p in pubs:
                p.close()
            logger.terminate()
            try:
                logger.wait(10)
            except subprocess.TimeoutExpired:
                logger.kill()
            logger.stderr.close()
    delays = []
    lost = 0
    for p in pubs:
        key = p.name.encode().hex()
        for number, sent in p.sent.items():
            got = seen.get((key, number))
            if got is None:
                lost += 1
            else:
                delays.append((got - sent) * 1000)
    delays.sort()
    p99 = delays[min(len(delays) - 1, int(len(delays) * 0.99))] if delays else None
    frames = 2 * boards * count
    return {"boards": boards, "rate": rate, "shots": boards * count, "lost": lost,
            "frames_per_s": round(frames / elapsed), "p99_ms": None if p99 is None else
            round(p99, 1), "max_ms": round(delays[-1], 1) if delays else None,
            "publisher_late_ms": round(late * 1000, 1)}


def measure(smoke=False):
    reason = broker_tool.available()
    if reason:
        raise Unavailable(reason)
    sizes = SMOKE if smoke else FULL
    workdir = tempfile.mkdtemp(prefix="netbench-")
    out = {}
    try:
        if sizes["phase_s"]:
            base_gap, base_link = baseline(sizes["phase_s"], workdir)
            gaps, end = poll_gaps(sizes["phase_s"], workdir)
            out["net_poll_gap_max_ms"] = max(g[0] for g in gaps.values())
            out["net_link_step_max_ms"] = max(g[1] for g in gaps.values())
            out["net_poll_gaps_ms"] = dict(gaps, no_network=[base_gap, base_link])
            out["net_board"] = end
        else:
            why = "measured by make bench only (seconds of real time per broker phase)"
            out["notes"] = {"net_poll_gap_max_ms": why, "net_link_step_max_ms": why}
        out["load_average"] = round(os.getloadavg()[0], 1)
        runs = []
        sustained = 0
        for rate in sizes["rates"]:
            run = scale_run(sizes["boards"], rate, sizes["seconds"], workdir)
            runs.append(run)
            ok = run["lost"] == 0 and run["p99_ms"] is not None and run["p99_ms"] < 250
            if not ok:
                break
            sustained = run["frames_per_s"]
        target = runs[0]
        out["mqtt_frames_per_s"] = sustained
        out["mqtt_p99_ms"] = target["p99_ms"]
        out["mqtt_lost_frames"] = target["lost"] * 2
        out["mqtt_runs"] = runs
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m tools.bench.net",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--smoke", action="store_true")
    args = ap.parse_args(argv)
    try:
        result = measure(args.smoke)
    except Unavailable as exc:
        print("netbench: %s" % exc, file=sys.stderr)
        return 1
    print(json.dumps(result, indent=None if args.json else 1, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
