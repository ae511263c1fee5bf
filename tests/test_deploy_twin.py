"""`make deploy` onto an ESP32 twin that is in the middle of a game: a builder's first
evening, end to end.

The twin runs the firmware with its watchdog armed (2 s here, the shortest board.cfg
allows), a game in progress on its flash. Deploy must get in past the watchdog, copy
everything, reset the board so that the new firmware starts by itself, and the game must
go on where it was: no shot lost.
"""

import time

import pytest
from twin_helpers import (
    booted,
    flash,
    list_flash,
    make_deploy,
    mpremote,
    play_shot,
    read_flash,
    run_deploy,
    scores_shown,
)

from tools import deploy

pytestmark = pytest.mark.realtime

CFG = {"watchdog_ms": 2000}


def _game_in_progress(twin):
    twin.wait_display(scores_shown, timeout=60)
    play_shot(twin, fallen=(1, 2))
    return play_shot(twin, fallen=(3,))


@pytest.mark.parametrize("mpy", [False, True], ids=["sources", "mpy"])
def test_deploy_over_a_running_game_resumes_it(tmp_path, mpy):
    flash(tmp_path, cfg=CFG)
    # 1.22: an .mpy with machine code for a newer MicroPython would not load there
    with booted(tmp_path, version="1.22.2") as twin:
        scores = _game_in_progress(twin)
        mark = len(twin.displays)
        out = make_deploy(twin.usb_path, mpy=mpy)
        assert out.returncode == 0, out.stdout + out.stderr
        # copied, reset into the new firmware, which started by itself
        assert twin.resets[-1] == "HARD" and "WDT" not in twin.resets, twin.resets
        twin.wait_display(lambda text: "HArd" in text, timeout=60, since=mark)
        twin.wait_display(lambda text: text == scores, timeout=60, since=mark)
        assert play_shot(twin, fallen=(4,)) != scores  # the game goes on
    assert read_flash(tmp_path, "main.py.off") is None
    files = list_flash(tmp_path, "rules_core")
    assert ("game.mpy" in files) == mpy and ("game.py" in files) != mpy, files


def test_deploy_refuses_an_unsupported_micropython_and_leaves_the_game(tmp_path):
    flash(tmp_path, cfg=CFG)
    # a release newer than deploy knows: the firmware runs on it, deploy refuses it (one
    # older than 1.22 shows Err 92 instead: tests/test_net_versions.py)
    with booted(tmp_path, version="1.30.0") as twin:
        scores = _game_in_progress(twin)
        mark = len(twin.displays)
        out = run_deploy(twin.usb_path)
        assert out.returncode == 1
        assert "MicroPython 1.30.0" in out.stderr and "1.22 to 1.29" in out.stderr
        # reset back into the firmware it had: the game goes on
        twin.wait_display(lambda text: "HArd" in text, timeout=60, since=mark)
        twin.wait_display(lambda text: text == scores, timeout=60, since=mark)


def test_check_board_names_what_deploy_cannot_do():
    from tools.simboard.esp32.espsys import mpy_of

    for minor in (22, 23, 24, 29):
        assert deploy.check_board((1, minor, 0), mpy_of((1, minor))) is None
    for minor in (20, 21, 30):  # 1.20-1.21: docs/esp32.md, "Releases"
        assert "1.22 to 1.29" in deploy.check_board((1, minor, 0), mpy_of((1, minor)))
    frozen = deploy.check_board((1, 24, 1), mpy_of((1, 24)), frozen=True, copies=[])
    assert "frozen build" in frozen and "--remove-copies" not in frozen
    shadowed = deploy.check_board((1, 24, 1), mpy_of((1, 24)), True, ["firmware"], "/dev/x")
    assert "/firmware from an earlier deploy" in shadowed
    assert "tools.deploy --port /dev/x --remove-copies" in shadowed


def test_mpy_files_are_bytecode_only_and_native_modules_stay_sources(tmp_path):
    staged = deploy.stage(str(tmp_path), mpy=True)
    assert "boardlib/crc32.py" in staged and "boardlib/cobs.py" in staged  # viper inside
    assert "rules_core/game.mpy" in staged and "main.py" in staged
    for target in staged:
        if target.endswith(".mpy"):
            assert not deploy.has_native_code(str(tmp_path / target)), target


def test_uart0_link_needs_safe_mode_to_get_back_in_and_the_game_survives(tmp_path):
    flash(tmp_path, cfg={"watchdog_ms": 2000, "link": "uart0"})
    with booted(tmp_path) as twin:
        scores = _game_in_progress(twin)
        out = run_deploy(twin.usb_path)  # Ctrl-C is a data byte for the link now
        assert out.returncode == 1 and "hold undo" in out.stderr, out.stdout + out.stderr
        twin.set_button("undo", True)  # hold undo while the board powers up
        twin.power_cycle()
        twin.wait_display(lambda text: text.strip() == "5AFE")
        twin.set_button("undo", False)
        out = mpremote(twin.usb_path, "resume", "exec",
                       "f = open('board.cfg', 'w'); f.write('{\"link\": \"uart2\"}'); f.close()")
        assert out.returncode == 0, out.stdout + out.stderr
        time.sleep(3)  # safe mode armed no watchdog: the board is still up
        assert twin.resets == ["PWR", "PWR"]
        twin.power_cycle()
        twin.wait_display(lambda text: text == scores, timeout=60)
