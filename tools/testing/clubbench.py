"""The club web app's live figure for `make bench`: board frame to browser, many tables.

    python -m tools.testing.clubbench [--tables 32] [--clients 50] [--seconds 10] [--smoke]

32 boards (tools.testing.fakeboards: board-shaped frames on ptys) each play a shot a second
into the real logger; the app (uvicorn on 127.0.0.1) runs in this process as
`python -m tools.club` runs it. 50 event-stream clients in another process (as 50
browsers on the club's network would be; one thread each, the standard library's HTTP
client) read /events. The delay of a shot is from the
moment its frames are written to the board's pty to the moment a client has read the event
that carries its state; every client's every shot counts. CLOCK_MONOTONIC is one clock for
both processes (Linux), so the two ends compare directly.
"""

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time

FULL = {"tables": 32, "clients": 50, "seconds": 10.0}
SMOKE = {"tables": 4, "clients": 5, "seconds": 2.0}


def percentile(values, share):
    ordered = sorted(values)
    if not ordered:
        return None
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def measure(tables=32, clients=50, seconds=10.0):
    from rules_core import Game
    from tools.club.app import create_app
    from tools.club.live import LiveHub
    from tools.logger.bridge import LoggerBridge
    from tools.logger.core import Logger
    from tools.port.upy import ROOT
    from tools.testing.browser import Served
    from tools.testing.fakeboards import FakeBoard

    folder = tempfile.mkdtemp(prefix="club-bench-")
    db = os.path.join(folder, "games.db")
    boards = [FakeBoard(b"B%02d" % (i + 1)) for i in range(tables)]
    logger = Logger([b.path for b in boards], db)
    hub = LiveHub(db)
    bridge = LoggerBridge(logger, on_commit=hub.notify).start()
    served = Served(create_app(db, commands=bridge, hub=hub))
    reader = None
    try:
        games = [Game("ddbu", (200, 200)) for _ in boards]
        for board, game in zip(boards, games, strict=True):
            board.send_state(game)
        _wait(lambda: len(hub.current) == tables, 60, "the tables never all came in")
        reader = subprocess.Popen(
            [sys.executable, "-m", "tools.testing.clubbench", "--read", served.url("/events"),
             "--clients", str(clients)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
        _wait(lambda: len(hub.clients) >= clients, 60, "the clients never all connected")
        time.sleep(0.5)  # each has read its first, whole-picture event
        sent = {}
        rng = random.Random(7)
        step = 1.0 / tables  # every board a shot a second, spread over the second
        start = time.monotonic()
        turn = 0
        while turn * step < seconds:
            time.sleep(max(0.0, start + turn * step - time.monotonic()))
            index = turn % tables
            board, game = boards[index], games[index]
            if game.finished:
                board.new_game()
                game = games[index] = Game("ddbu", (200, 200))
            game.shot(pins=rng.choice((0, 0, 1, 2, 4)))
            sent[(board.key, board.game_no, game.shots)] = time.monotonic()
            board.send_state(game)
            turn += 1
        time.sleep(1.0)  # the last shots' way to the clients
        out, err = reader.communicate(b"stop\n", timeout=60)
        if reader.returncode != 0:
            raise RuntimeError("the event-stream clients failed: %s" % err.decode()[-300:])
        receipts = json.loads(out)
    finally:
        if reader is not None and reader.poll() is None:
            reader.kill()
        served.stop()
        bridge.stop()
        for board in boards:
            board.close()
        import shutil

        shutil.rmtree(folder, ignore_errors=True)
    delays = []
    seen = set()
    for client, board, game_no, shots, at in receipts:
        key = (board, game_no, shots)
        if key in sent and (client, key) not in seen:
            seen.add((client, key))
            delays.append(1000.0 * (at - sent[key]))
    expected = len(sent) * clients
    return {
        "club_tables": tables, "club_sse_clients": clients, "club_shots": len(sent),
        "club_sse_p50_ms": _round(percentile(delays, 0.50)),
        "club_sse_p99_ms": _round(percentile(delays, 0.99)),
        "club_sse_max_ms": _round(max(delays) if delays else None),
        "club_sse_missed": expected - len(delays),
        "club_load_average": round(os.getloadavg()[0], 1),  # the machine's other work
    }


def _round(value):
    return None if value is None else round(value, 1)


def _wait(check, timeout, message):
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise RuntimeError(message)
        time.sleep(0.02)


# -- the clients' side (another process) ----------------------------------------------------------

def _client(index, url, receipts, ready):
    """One browser's event stream, read with the standard library's HTTP client (cheap per
    event, so the clients' own cost weighs little in the figure)."""
    import http.client
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    # each from an address of its own, as the club's browsers are (the app keeps at most
    # 32 connections an address, tools/club/serving.py)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=None,
                                      source_address=("127.0.%d.%d" % divmod(2 + index, 250),
                                                      0))
    conn.request("GET", parts.path, headers={"Accept": "text/event-stream"})
    response = conn.getresponse()
    ready.release()
    try:
        while True:
            line = response.readline()
            if not line:
                return
            if line.startswith(b"data: "):
                at = time.monotonic()
                message = json.loads(line[6:])
                if message.get("all"):
                    continue  # the whole picture on connecting: no shot's delay
                for table in message.get("tables", ()):  # (a ping has none)
                    receipts.append((index, table["board"], table["game_no"],
                                     table["state"]["shots"], at))
    except OSError:
        return


def _read(url, clients):
    receipts = []
    ready = threading.Semaphore(0)
    for i in range(clients):
        threading.Thread(target=_client, args=(i, url, receipts, ready), daemon=True).start()
    for _ in range(clients):
        ready.acquire()
    sys.stdin.readline()  # "stop" (or the end of stdin)
    return list(receipts)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m tools.testing.clubbench")
    ap.add_argument("--tables", type=int)
    ap.add_argument("--clients", type=int)
    ap.add_argument("--seconds", type=float)
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--read", metavar="URL", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.read:
        print(json.dumps(_read(args.read, args.clients)))
        return 0
    sizes = dict(SMOKE if args.smoke else FULL)
    for key in sizes:
        if getattr(args, key) is not None:
            sizes[key] = getattr(args, key)
    print(json.dumps(measure(**sizes), sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
