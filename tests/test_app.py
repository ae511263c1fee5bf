"""The application on the simulated board, on the MicroPython unix port: boot notices,
bad data on flash, a stuck sensor, the setup menu and the watchdog.

Each scenario runs the real firmware (`firmware.app.App` on `tools.simboard`) and reads
the display through the emulated chips, i.e. what a person at the table would see.
"""

import json

import pytest

from tools import upy

PRELUDE = """
import json, os, sys
from tools.simboard.board import build, FLASH_MOUNT
from firmware.app import App
from firmware.run import tick

def play(app, t0, t1):
    t = t0
    while t <= t1:
        tick(app, t)
        t += 5
    return t

def seen(sim, app, t0, t1, every=100):
    # every distinct picture on the display between t0 and t1, in order
    shots, t, last = [], t0, None
    while t <= t1:
        tick(app, t)
        if t % every == 0:
            v = sim.visible()
            if v != last:
                shots.append(v)
                last = v
        t += 5
    return shots

def reboot(state, cause="PWR"):
    try:
        os.umount(FLASH_MOUNT)
    except OSError:
        pass
    sim = build(state_dir=state)
    sim.board.reset_cause = cause
    app = App(sim.board)
    app.boot(0)
    return sim, app
"""


def run_device(tmp_path, body):
    script = tmp_path / "scenario.py"
    script.write_text(PRELUDE + body)
    proc = upy.run([str(script), str(tmp_path / "flash")], timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_boot_shows_the_reset_cause_then_the_scores(tmp_path):
    out = run_device(tmp_path, """
sim, app = reboot(sys.argv[1], cause="WDT")
print(json.dumps(seen(sim, app, 0, 5000)))
""")
    # a watchdog reset says so for a moment; then the scores, player 1 at the table
    assert out[0] == "r5t  Wdt"  # "S" reads as "5" on seven segments
    assert out[-1] == " .  0   0"  # the dot of the outer left digit: player 1 to play


def test_corrupt_config_falls_back_to_defaults_and_says_err_31(tmp_path):
    out = run_device(tmp_path, """
state = sys.argv[1]
sim, app = reboot(state)
with open(FLASH_MOUNT + "/board.cfg", "w") as f:
    f.write("PBC1 0000dead\\n{garbage")
sim, app = reboot(state)
pictures = seen(sim, app, 0, 6000)
print(json.dumps({"pictures": pictures, "settle": app.config["settle_ms"],
                  "rules": app.state["rules"]}))
""")
    assert "Err   31" in out["pictures"]
    assert out["settle"] == 1500 and out["rules"] == "ddbu"  # the defaults


def test_cut_off_journal_resumes_the_intact_prefix_and_says_err_41(tmp_path):
    out = run_device(tmp_path, """
state = sys.argv[1]
sim, app = reboot(state)
t = play(app, 0, 1000)                      # the sensors see every pin standing first
for pins in (0b00001, 0b00011, 0b00100):   # three scoring shots by player 1
    for spot in range(5):
        if pins & (1 << spot):
            sim.set_spot(spot + 1, False)
    t = play(app, t, t + 200)
    sim.set_standing_mask(0x1F)
    t = play(app, t, t + 3000)
scores = app.state["score"]
path = FLASH_MOUNT + "/game/game.jrn"
with open(path, "rb") as f:
    data = f.read()
with open(path, "wb") as f:
    f.write(data[:-3])                      # the power went mid-record
sim, app = reboot(state)
pictures = seen(sim, app, 0, 7000)
print(json.dumps({"before": scores, "after": app.state["score"], "pictures": pictures}))
""")
    assert out["before"] == [2 + 4 + 2, 0]
    assert out["after"] == [2 + 4, 0]  # the last record was cut: the two before it stand
    assert any(p.startswith("Err") and p.endswith("41") for p in out["pictures"])


def test_a_sensor_dark_for_minutes_shows_err_1n_and_never_scores(tmp_path):
    out = run_device(tmp_path, """
sim, app = reboot(sys.argv[1])
sim.set_spot(2, False)                       # spot 2 goes dark and stays dark
t = play(app, 0, 185000)                     # past the 3-minute stuck time
pictures = seen(sim, app, t, t + 5000)
t += 5005
score_while_stuck = list(app.state["score"])
sim.set_spot(1, False)                       # a real shot meanwhile: pin 1
t = play(app, t, t + 200)
sim.set_spot(1, True)
t = play(app, t, t + 3000)
print(json.dumps({"pictures": pictures, "stuck": score_while_stuck,
                  "after": app.state["score"], "shots": app.state["shots"]}))
""")
    assert any(p.startswith("Err") and p.endswith("12") for p in out["pictures"])
    assert out["stuck"] == [0, 0]  # the dark spot scored nothing, nor passed the turn
    assert out["after"] == [2, 0] and out["shots"] == 1  # only pin 1 counted


def test_setup_menu_starts_a_new_game_from_the_buttons(tmp_path):
    out = run_device(tmp_path, """
sim, app = reboot(sys.argv[1])
t = play(app, 0, 5000)
CAROM, FOUL, OK, UNDO = 0, 1, 2, 3
def press(t, b, ms=100):
    sim.set_button(b, True)
    t = play(app, t, t + ms)
    sim.set_button(b, False)
    return play(app, t, t + 200)
pictures = []
t = press(t, OK, 1000)                       # hold ok: the menu
pictures.append(sim.visible())
t = press(t, CAROM)                          # rules: ceb
pictures.append(sim.visible())
t = press(t, OK)                             # distance of player 1
t = press(t, CAROM)                          # 50
pictures.append(sim.visible())
t = press(t, OK); t = press(t, OK)           # distance 2, then sets
t = press(t, CAROM)                          # best of 3
pictures.append(sim.visible())
t = press(t, OK); t = press(t, OK)           # who starts, then new game?
pictures.append(sim.visible())
t = press(t, CAROM)                          # yes
pictures.append(sim.visible())
t = press(t, OK)
t = play(app, t, t + 5000)
pictures.append(sim.visible())
st = app.state
print(json.dumps({"pictures": pictures, "rules": st["rules"], "distance": st["distance"],
                  "best_of": st["best_of"], "menu": app.menu is not None}))
""")
    assert out["pictures"][0] == "rULEddbu"
    assert out["pictures"][1] == "rULE CEb"
    assert out["pictures"][2] == "d1    50"
    assert out["pictures"][3] == "5Et5   3"  # "S" and "5" share a shape on 7 segments
    assert out["pictures"][4] == "nEW   no"
    assert out["pictures"][5] == "nEW  yE5"
    assert out["pictures"][6] == " .  0   0"
    assert out["rules"] == "ceb" and out["distance"] == [50, 40] and out["best_of"] == 3
    assert out["menu"] is False


@pytest.mark.parametrize("broken", [False, True])
def test_watchdog_is_fed_only_while_every_task_runs(tmp_path, broken):
    out = run_device(tmp_path, """
import asyncio
from firmware.run import Runner

class CountingWatchdog:
    feeds = 0
    def feed(self):
        self.feeds += 1

sim, app = reboot(sys.argv[1])
sim.board.wdt = CountingWatchdog()
if %s:
    def stuck(now_ms):
        raise RuntimeError("display bus hung")
    app.refresh_display = stuck
runner = Runner(app)
async def main():
    try:
        await asyncio.wait_for(runner.main(), 1.2)
    except asyncio.TimeoutError:
        pass
asyncio.run(main())
print(json.dumps({"feeds": sim.board.wdt.feeds, "errors": runner.errors}))
""" % broken)
    if broken:
        assert out["feeds"] == 0 and out["errors"] > 0  # the watchdog will reset the board
    else:
        assert out["feeds"] >= 2 and out["errors"] == 0  # upkeep feeds every 250 ms
