"""What the host side and the links give: the logger's frames per second, the network link's
and TLS's costs, flash damage, the club app's live and first-load figures, the flash's pauses.
"""

import json
import os
import select
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time

from tools.bench.harness import FULL, Unavailable, parse_lines
from tools.port import upy

# -- the logger -----------------------------------------------------------------------------------

def flood_frames(count):
    """A hello and `count` shots of a game in play, as the board's link sends them: each
    shot's event frame, then the state frame that counts it (firmware/app.py)."""
    from boardlib.link import Link
    from rules_core import Game
    from rules_core.snapshot import pack_state
    from tools.sim.board.shots import LONG_SETTINGS

    class Collect:
        def __init__(self):
            self.data = bytearray()

        def write(self, buf):
            self.data += buf
            return len(buf)

        def readinto(self, buf):
            return None

    wire = Collect()
    link = Link(wire, 0)
    link.send_hello(1, "PWR", 0)
    game = Game(LONG_SETTINGS["rules"], LONG_SETTINGS["distance"])
    for i in range(count):
        if game.finished:
            game = Game(LONG_SETTINGS["rules"], LONG_SETTINGS["distance"])
        game.shot(pins=(i * 7) & 31, carom=i & 1, fouls=())
        index = game.history.count
        link.send_event(index, game.history.record(index - 1), game.last_player,
                        game.last_points, game.last_to, i)
        link.send_state(pack_state(game), i, game.history)
    return bytes(wire.data)


def logger_figures(sizes, workdir):
    import pty  # noqa: F401  (a pty-less system fails here, clearly)

    from tools.logger.core import Logger

    count = sizes["flood"]
    data = flood_frames(count)
    master, slave = os.openpty()
    path = os.ttyname(slave)
    db = os.path.join(workdir, "flood.db")
    lg = Logger([path], db)
    try:
        deadline = time.monotonic() + 10
        while lg.ports[0].serial is None and time.monotonic() < deadline:
            lg.step(0.01)
        if lg.ports[0].serial is None:
            raise Unavailable("the logger could not open the pty")

        def pour():
            view = memoryview(data)
            while view:
                view = view[os.write(master, view[:4096]):]

        def drain():  # the logger's own commands to the board
            while not done.is_set():
                try:
                    if select.select([master], [], [], 0.05)[0]:
                        os.read(master, 4096)
                except OSError:
                    return

        done = threading.Event()
        drainer = threading.Thread(target=drain, daemon=True)
        drainer.start()
        port = lg.ports[0]
        started = time.monotonic()
        writer = threading.Thread(target=pour, daemon=True)
        writer.start()
        deadline = started + 120
        while port.reader.frames < 2 * count + 1 and time.monotonic() < deadline:
            lg.step(0.01)
        took = time.monotonic() - started
        done.set()
        drainer.join()  # before the pty's descriptors are closed
        frames = port.reader.frames
        gaps = port.counters["gaps"]
    finally:
        lg.close()
        os.close(master)
        os.close(slave)
    with sqlite3.connect(db) as conn:
        stored = conn.execute("SELECT COUNT(*) FROM states").fetchone()[0]
        proven = conn.execute("SELECT COUNT(*) FROM states WHERE verdict='proven'").fetchone()[0]
    if frames < 2 * count + 1 or gaps or stored < count:
        raise Unavailable("the logger lost frames: %d of %d read, %d gaps, %d states stored"
                          % (frames, 2 * count + 1, gaps, stored))
    if proven != count:  # each state counts the events sent before it
        raise Unavailable("the logger proved %d of the flood's %d states" % (proven, count))
    return {"logger_frames_per_s": round(2 * count / took, 1)}


# -- the network (tools/bench/net.py) -------------------------------------------------------------

def network_figures(smoke):
    from tools.bench import net as netbench

    try:
        got = netbench.measure(smoke)
    except netbench.Unavailable as exc:
        raise Unavailable(str(exc)) from None
    got.pop("net_board", None)
    if "load_average" in got:
        got["net_load_average"] = got.pop("load_average")
    return got


def tls_figures(smoke):
    """The costliest poll of the network link's TLS connection (tools/bench/tls.py)."""
    if smoke:
        raise Unavailable("tls_poll_ms_esp32_est: the full bench only (python -m "
                          "tools.bench.tls: about a minute under callgrind)")
    from tools.bench import tls as tlscost

    try:
        (row,) = tlscost.run(cases=tlscost.CASES[:1])
    except (RuntimeError, SystemExit) as exc:
        raise Unavailable("tlscost: %s" % exc) from None
    return {"tls_poll_ms_esp32_est": row["max_poll_ms_esp32"]}


# -- flash damage ---------------------------------------------------------------------------------

BITFLIP = upy.entry("bitflip")


def bitflip_figures(sizes):
    """One flipped bit at a time in the used area of a stored game's flash image, then a
    resume (docs/persistence.md): flips that lost more than the last event, or the whole
    game, without an Err; and the share that lost nothing."""
    proc = subprocess.run(
        upy.command([os.path.join(upy.ROOT, BITFLIP), str(sizes["bitflips"]),
                     str(sizes["bitflip_events"]), "1"], "32M"),
        capture_output=True, text=True, env=upy.env(), cwd=upy.ROOT, timeout=1800,
        check=False,
    )
    if proc.returncode != 0:
        raise Unavailable("%s failed: %s" % (BITFLIP, proc.stderr.strip()[-300:]))
    got = parse_lines(proc.stdout)
    return {"flash_bitflip_silent_losses": got["silent_losses"],
            "flash_bitflip_whole_pct": round(100.0 * got["whole"] / got["flips"], 1)}


# -- the club web app (tools/testing/clubbench.py) ------------------------------------------------

def club_figures(smoke):
    """32 tables into the logger, 50 event-stream clients: board frame to client (p99)."""
    proc = subprocess.run(
        [sys.executable, "-m", "tools.testing.clubbench"] + (["--smoke"] if smoke else []),
        capture_output=True, text=True, cwd=upy.ROOT, timeout=600, check=False)
    if proc.returncode != 0:
        raise Unavailable("tools.testing.clubbench failed: %s" % proc.stderr.strip()[-300:])
    got = json.loads(proc.stdout)
    return {"club_sse_p99_ms": got["club_sse_p99_ms"], "club_sse_missed": got["club_sse_missed"],
            "club_sse": {key: got[key] for key in sorted(got)}}


# -- the club's pages with a season stored (tools/testing/clubload.py) ----------------------------

def club_first_load_figures(sizes):
    """The first load of the club's pages with ``club_games`` games stored
    (tools/testing/clubload.py)."""
    try:
        from tools.testing import clubload as loadbench
    except ImportError as exc:
        raise Unavailable("the club app cannot be imported: %s" % exc) from None
    folder = None if sizes is FULL else tempfile.mkdtemp(prefix="bench-club-")
    try:
        got = loadbench.measure(sizes["club_games"], sizes["club_runs"], folder)
    except Exception as exc:  # noqa: BLE001 - any failure here is a note, not a crash
        raise Unavailable("club first load: %s: %s" % (type(exc).__name__, exc)) from None
    finally:
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)
    got.pop("club_games", None)
    return got


def flash_gap_figures(smoke):
    """The longest input-poll gap a compaction's erases cause (tools/bench/flashgap.py)."""
    from tools.bench import flashgap

    try:
        return flashgap.figures(smoke)
    except flashgap.Unavailable as exc:
        raise Unavailable(str(exc)) from None
