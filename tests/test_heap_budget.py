"""The heap budget of the simulated board (tools/sim/board/heap.py, run.py --heap-budget):
exactly the budget, whatever the unix port did before, and the same game in the same budget
whatever folders its files are in. The bench's ram32_data_play_bytes is the smallest such
budget (docs/performance.md, "What the heap figures count").
"""

import os
import re
import subprocess

import pytest

from tools.port import upy
from tools.sim.board.shots import LONG_SETTINGS, long_game


def interpreters():
    """The pinned port, and the 32-bit one the bench measures on when there is one."""
    found = [("pinned", upy.binary())]
    path, _ = upy.interpreter32()
    if path:
        found.append(("32-bit", path))
    return found


HOLES = """
import gc
from tools.sim.board.heap import BLOCK, largest_free, pin
# a heap in pieces: 3,000 single free blocks between live ones, as loading code leaves it
pairs = [(i, i) for i in range(6000)]
for i in range(0, len(pairs), 2):
    pairs[i] = None
gc.collect()
ballast = pin(%d)
gc.collect()
free = gc.mem_free()
print(free, largest_free(free), BLOCK)
"""


@pytest.mark.parametrize("name,binary", interpreters())
def test_the_budget_is_all_the_heap_left_even_in_a_heap_in_pieces(name, binary):
    """Every free block but the budget is taken, down to the single ones: the ballast once
    stopped at 2,047 pieces and left 48 KB of such holes here for the firmware."""
    budget = 4096
    proc = subprocess.run([binary, "-X", "heapsize=1M", "-c", HOLES % budget],
                          capture_output=True, text=True, cwd=upy.ROOT, env=upy.env(),
                          timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    free, largest, block = map(int, proc.stdout.split())
    # the budget, and the few blocks of pin's own call, which it gives back on return
    assert budget <= free <= budget + 8 * block, (name, free)
    assert largest >= budget * 9 // 10, (name, largest)  # in one piece


def _play(binary, folder, timeline, seed):
    """The simulated board playing `timeline` in a 40 KB budget, its files in `folder`
    (named from there, as the bench names them): its `heap:` report and its final state."""
    os.makedirs(os.path.join(folder, "state"))
    with open(os.path.join(folder, "game.timeline"), "w") as f:
        f.write(timeline)
    env = upy.env()
    env["MICROPYPATH"] = ":".join([os.path.relpath(upy.ROOT, folder),
                                   os.path.relpath(upy.UPYLIB, folder), ".frozen"])
    proc = subprocess.run(
        [binary, "-X", "heapsize=8M", os.path.relpath(os.path.join(upy.ROOT, upy.entry("board")),
                                                      folder),
         "--timeline", "game.timeline", "--state", "state", "--rules",
         LONG_SETTINGS["rules"], "--distance", str(LONG_SETTINGS["distance"][0]),
         "--heap-budget", "40K", "--seed", str(seed)],
        capture_output=True, text=True, cwd=folder, env=env, timeout=300)
    assert proc.returncode == 0, proc.stdout[-1000:] + proc.stderr[-1000:]
    heap = re.findall(r"^heap: .*$", proc.stderr, re.M)
    assert heap, proc.stderr
    return heap[-1], proc.stdout.strip().splitlines()[-1]


@pytest.mark.parametrize("name,binary", interpreters())
def test_a_game_in_a_budget_takes_the_same_heap_wherever_it_runs(tmp_path, name, binary):
    """The same game, with the same random bytes (--seed), leaves the same heap behind,
    to the byte and the largest block, run from folders whose names differ in length: the
    names the port is given are interned before the budget is set, and once moved how much
    of the heap the ballast left in pieces, and where (ram32_data_play_bytes read 13,312,
    14,336 and 15,360 in three checkouts of one tree)."""
    timeline = long_game(40, 11)
    short = _play(binary, str(tmp_path / "a"), timeline, 5)
    long = _play(binary, str(tmp_path / ("a" + "-longer" * 9)), timeline, 5)
    assert short == long
    assert " free at the end, largest block " in short[0]


FIRST_NAME = """
import gc
from tools.sim.board.heap import own_qstr_pool, pin
# the simulator's own names, their characters %d bytes longer in this run (a folder's name)
getattr(gc, "s" * %d + "_sim", None)
ballast = pin(16384 - own_qstr_pool())
box = type("Box", (), {})()
gc.collect()
before = gc.mem_free()
getattr(box, "firmware_%%d" %% 1, None)  # the firmware's first new name
gc.collect()
first = before - gc.mem_free()
for i in range(8):  # short names: room for them in the chunk the first one took
    getattr(box, "firmware_%%d" %% (i + 2), None)
gc.collect()
print(first, before - gc.mem_free() - first)
"""


@pytest.mark.parametrize("name,binary", interpreters())
def test_the_firmwares_first_names_cost_the_same_wherever_the_tree_is(name, binary):
    """As on the ESP32, whose names before the firmware's are in flash, the firmware's first
    new names take room for their characters (chunks of 128 bytes, py/qstr.c) from its
    budget, and cost the same however long the simulator's own names were. The
    chunk the simulator's names were in once gave the firmware its free end, outside the
    budget: up to 127 bytes, more or fewer with the folder the tree was checked out in,
    and enough to bring the networked board online on the stock heap in one folder and not
    in another (docs/performance.md, "The twin's names, and the rooms again")."""
    costs = set()
    for longer in (1, 37, 70, 101):
        proc = subprocess.run([binary, "-X", "heapsize=1M", "-c",
                               FIRST_NAME % (longer, longer)],
                              capture_output=True, text=True, cwd=upy.ROOT, env=upy.env(),
                              timeout=120)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        costs.add(tuple(map(int, proc.stdout.split())))
    assert len(costs) == 1, (name, costs)
