"""First load of the club's pages with a season of games in the database.

    python -m tools.testing.clubload [--games 10000] [--runs 5] [--json]

A database of ``--games`` games (tools.testing.sample.fill: stored through the logger's own
Store functions, every shot and board state, most games named) is made once and kept in
build/ (made again when missing). Then, ``--runs`` times, a fresh app (tools.club.app's
create_app, as `python -m tools.club` builds it) is served by uvicorn on 127.0.0.1 and a
free port, and each page is fetched over HTTP by new clients: the time from sending the
request to the last byte of the page. The figures are medians in milliseconds: the
`*_first_load_ms` of a new client of a running app, the `*_cold_ms` of the first request a
just-started app answers (`make bench`; docs/performance.md).
"""

import argparse
import json
import os
import socket
import statistics
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PAGES = {"club_tables_first_load_ms": "/", "club_results_first_load_ms": "/results",
         "club_players_first_load_ms": "/players", "club_game_first_load_ms": "/game/%d"}
# A page's first load: a new client (a club TV or phone opening the page: its own
# connection, nothing cached) asks a running app. The cold figures: the first request a
# just-started app answers.
SAMPLE_VERSION = 1  # made again when tools.testing.sample changes what it stores


def season(games, folder=None):
    """The path of a database holding ``games`` games (made when missing)."""
    from tools.logger.store import Store
    from tools.testing.sample import fill

    folder = folder or os.path.join(ROOT, "build", "club-bench")
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "season-%d-v%d.db" % (games, SAMPLE_VERSION))
    if os.path.exists(path):
        return path
    partial = path + ".part"
    for leftover in (partial, partial + "-wal", partial + "-shm"):
        if os.path.exists(leftover):
            os.remove(leftover)
    store = Store(partial)
    try:
        fill(store, games)
        store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        store.close()
    os.replace(partial, path)
    return path


class _Served:
    def __init__(self, app):
        import uvicorn

        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
        self.thread = threading.Thread(target=self.server.run,
                                       kwargs={"sockets": [self.sock]}, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 60
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the club app did not start")
            time.sleep(0.01)

    def stop(self):
        self.server.should_exit = True
        self.thread.join(timeout=10)
        self.sock.close()


def first_loads(path, runs=5, loads=5):
    """{figure: median ms}: each page's load by a new client (its own connection, nothing
    cached) of a running app, ``loads`` times in each of ``runs`` freshly started apps;
    and the very first request a freshly started app answers (templates compiled, the
    database opened: the cold figures)."""
    import httpx

    from tools.club.app import create_app

    times = {key: [] for key in PAGES}
    cold = {key.replace("first_load", "cold"): [] for key in PAGES}
    some_game = _latest_finished(path)
    for _ in range(runs):
        for key, page in PAGES.items():
            served = _Served(create_app(path))
            url = "http://127.0.0.1:%d%s" % (served.port, page.replace("%d", str(some_game)))
            try:
                for n in range(loads + 1):
                    with httpx.Client(timeout=120) as client:  # a new client: a new connection
                        started = time.perf_counter()
                        reply = client.get(url)
                        took = (time.perf_counter() - started) * 1000
                    if reply.status_code != 200:
                        raise RuntimeError("%s answered %d" % (page, reply.status_code))
                    if n == 0:
                        cold[key.replace("first_load", "cold")].append(took)
                    else:
                        times[key].append(took)
            finally:
                served.stop()
    return {key: round(statistics.median(values), 1)
            for key, values in list(times.items()) + list(cold.items())}


def _latest_finished(path):
    import sqlite3

    db = sqlite3.connect(path)
    try:
        return db.execute("SELECT MAX(id) FROM games WHERE status='finished'").fetchone()[0]
    finally:
        db.close()


def measure(games=10000, runs=5, folder=None):
    """The first-load figures with ``games`` games in the database (tools.bench)."""
    started = time.monotonic()
    path = season(games, folder)
    made = time.monotonic() - started
    got = first_loads(path, runs)
    got["club_games"] = games
    got["notes"] = {"club first load": "medians over %d started apps; the %d-game database "
                    "took %.0f s to make; load average %.1f" % (
                        runs, games, made, os.getloadavg()[0])}
    return got


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m tools.testing.clubload",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("--games", type=int, default=10000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    got = measure(args.games, args.runs)
    print(json.dumps(got, sort_keys=True) if args.json else
          "\n".join("%-30s %8s" % (k, v) for k, v in sorted(got.items()) if k != "notes"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
