"""What a board keeps loaded while it plays: the modules counted apart by `make bench`
(tools/bench/front.py, docs/performance.md) are not among them; and the bench counts the .mpy
files `make deploy` ships, byte for byte.

An ESP32 twin boots the firmware as deployed (sources, and .mpy files), plays a shot, and
is interrupted (Ctrl-C, as mpremote does); its REPL then lists the modules the firmware
had imported.
"""

import ast
import os

import pytest
from twin_helpers import booted, flash, mpremote, play_shot, scores_shown

from tools.bench import esp32 as bench_esp32
from tools.bench import harness as bench_harness
from tools.bench import heap as bench_heap
from tools.port import upy

pytestmark = pytest.mark.long(6)

LIST_MODULES = "import sys; print(repr(sorted(sys.modules)))"


def module_name(rel):
    return rel[:-3].replace("/", ".")


@pytest.mark.parametrize("mpy", [False, True], ids=["sources", "mpy"])
def test_a_playing_board_holds_none_of_the_modules_counted_apart(tmp_path, mpy):
    flash(tmp_path, mpy=mpy)
    with booted(tmp_path) as twin:
        twin.wait_display(scores_shown, timeout=60)
        play_shot(twin, fallen=(1, 2))
        out = mpremote(twin.usb_path, "resume", "exec", LIST_MODULES)
    assert out.returncode == 0, out.stdout + out.stderr
    loaded = ast.literal_eval(out.stdout.strip().splitlines()[-1])
    assert "firmware.app" in loaded and "rules_core.game" in loaded  # it was playing
    assert "boardlib.tm1637" in loaded  # the default display's driver
    apart = (bench_harness.NOT_IN_PLAY + bench_harness.BOOT_MODULES + bench_harness.LOAD_MODULES
             + (bench_harness.DISPLAY_DRIVERS[1],))  # a TM1637 board has no MAX7219 driver
    assert [m for m in map(module_name, apart) if m in loaded] == []


def test_the_bench_counts_apart_the_modules_the_firmware_drops_after_boot():
    from tools.bench.harness import BOOT_MODULES

    with open(os.path.join(upy.ROOT, "firmware", "powerup.py")) as f:
        source = f.read()
    tree = ast.parse(source)
    dropped = next(node.value for node in tree.body if isinstance(node, ast.Assign)
                   and node.targets[0].id == "BOOT_MODULES")
    assert sorted(ast.literal_eval(dropped)) == sorted(map(module_name, BOOT_MODULES))


def test_the_bench_counts_the_mpy_files_deploy_ships(tmp_path):
    from tools.board import deploy

    stage = tmp_path / "stage"
    deploy.stage(str(stage), mpy=True)
    for rel in ("rules_core/game.py", "boardlib/journal.py", "firmware/app.py"):
        counted = bench_harness.compile_tree((), str(tmp_path / "bench"), "xtensawin", only=[rel])
        assert counted == os.path.getsize(stage / (rel[:-3] + ".mpy")), rel


FIRMWARE_PACKAGES = ("rules_core", "boardlib", "firmware", "umqtt")


def test_the_heap_figures_count_the_firmware_alone(tmp_path):
    """ram32_code_net_bytes (and the peaks built on it) counts what a networked board holds:
    the firmware's modules and umqtt, none of the simulator's stand-ins or the bench's own
    code (on a board those are C, or not there), and not the modules dropped after boot
    (the configuration's checks, boardlib.netconfig with them)."""
    interp = bench_harness.Interpreter.find()
    stage = bench_heap.stage_tree(str(tmp_path), "mpy", True)
    frozen = bench_heap.frozen_image(stage, str(tmp_path))
    out = bench_heap.heap_device(["code", "net"], stage, interp, frozen)
    loaded = out["modules"].split(",")
    assert "boardlib.mqttlink" in loaded and "firmware.app" in loaded
    assert [m for m in loaded if m.split(".")[0] not in FIRMWARE_PACKAGES] == []
    assert [m for m in map(module_name, bench_harness.BOOT_MODULES) if m in loaded] == []
    # on 32 bits what it holds fits the ESP32's heap; the pinned 64-bit port's words are
    # twice as wide (the bench says which it counted on)
    assert 0 < int(out["held"]) < bench_esp32.ESP32_HEAP * (1 if interp.bits == 32 else 2)
