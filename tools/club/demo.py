"""Simulated tables for `python -m tools.club --demo N` (`make club`): the club app alive
without a board.

    demo = Demo(4, speed=4.0)      # four simulated boards, each on its own pty pair
    demo.host_paths                # the logger's ends, opened like /dev/ttyUSB0
    demo.start() ... demo.stop()

Each table is the real firmware on the MicroPython unix port on the simulated board (as
`make sim`: tools/sim/board/run.py), with its own flash image and its own board id (T01,
T02, ...). It plays a random legal game (tools.sim.timelines.random_game: pins, caroms,
fouls, an undo now and then) at `speed` times real time; when the game is over and the
board has sat for its tail, the next game starts on the same flash with other rules.
"""

import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading

from tools.port import upy
from tools.port.linkpipe import LinkPipe
from tools.sim.timelines import build, random_game

RUNNER = upy.entry("board")
# (rules, distance, sets): what a club plays, the demo goes round them
GAMES = (("ddbu", 40, 1), ("ceb", 60, 3), ("russian", 60, 1), ("ceb", 40, 1),
         ("ddbu", 60, 1))
GAP_MS = 5000  # table time per shot: a calm player


class Demo:
    def __init__(self, count, speed=4.0, seed=None):
        if not 1 <= count <= 32:
            raise ValueError("the demo plays 1 to 32 tables")
        self.count = count
        self.speed = speed
        self.random = random.Random(seed)
        self.pipes = [LinkPipe() for _ in range(count)]
        self.host_paths = [pipe.host_path for pipe in self.pipes]
        self.folder = tempfile.mkdtemp(prefix="pinboard-club-demo-")
        self.games_played = [0] * count
        self._stop = threading.Event()
        self._procs = [None] * count
        self._threads = []

    def start(self):
        for table in range(self.count):
            thread = threading.Thread(target=self._table, args=(table,), daemon=True,
                                      name="demo-table-%d" % (table + 1))
            thread.start()
            self._threads.append(thread)
        return self

    def _table(self, table):
        state = os.path.join(self.folder, "table%02d" % (table + 1))
        timeline = os.path.join(self.folder, "table%02d.timeline" % (table + 1))
        turn = table
        while not self._stop.is_set():
            rules, distance, sets = GAMES[turn % len(GAMES)]
            turn += 1
            seed = self.random.randrange(1 << 30)
            events = random_game(rules, seed, length=150, distance=(distance, distance),
                                 sets=sets, first=1 + seed % 2)
            text, _ = build(rules, events, distance=(distance, distance), sets=sets,
                            first=1 + seed % 2, gap_ms=GAP_MS)
            with open(timeline, "w") as f:
                f.write(text)
            args = [RUNNER, "--timeline", timeline, "--speed", str(self.speed),
                    "--link", self.pipes[table].device_path, "--state", state,
                    "--board-id", "T%02d" % (table + 1), "--rules", rules,
                    "--distance", str(distance), "--sets", str(sets),
                    "--first", str(1 + seed % 2)]
            if self.games_played[table]:
                args.append("--new-game")
            proc = upy.popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            self._procs[table] = proc
            out, err = proc.communicate()
            if self._stop.is_set() or proc.returncode < 0:
                return  # stopped, or killed with the app (Ctrl-C reaches the whole group)
            if proc.returncode != 0:
                # A board that fails is shown as it stopped; say why once, do not spin.
                # (The unix port prints an uncaught exception on stdout; a board that a
                # Ctrl-C stopped says nothing.)
                said = (err + out).decode(errors="replace").strip().splitlines()
                lines = [line for line in said if not line.startswith("{")]
                if lines and not lines[-1].startswith("KeyboardInterrupt"):
                    sys.stderr.write("club demo: table T%02d stopped: %s\n"
                                     % (table + 1, lines[-1]))
                return
            self.games_played[table] += 1

    def stop(self):
        self._stop.set()
        for proc in self._procs:
            if proc is not None and proc.poll() is None:
                proc.terminate()
        for proc in self._procs:
            if proc is not None:
                try:
                    proc.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    proc.kill()
        for thread in self._threads:
            thread.join(timeout=5)
        for pipe in self.pipes:
            pipe.close()
        shutil.rmtree(self.folder, ignore_errors=True)
