"""`make deploy` onto an ESP32 twin that is in the middle of a game: a builder's first
evening, end to end.

The twin runs the firmware with its watchdog armed (2 s here, the shortest board.cfg
allows), a game in progress on its flash. Deploy must get in past the watchdog, copy
everything, reset the board so that the new firmware starts by itself, and the game must
go on where it was: no shot lost.
"""

import json
import re
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

from tools.board import deploy
from tools.port import mpycross, upy
from tools.sim.board import frozen
from tools.sim.board.esp32 import releases

pytestmark = [pytest.mark.long(96), pytest.mark.realtime]

CFG = {"watchdog_ms": 2000}


def _game_in_progress(twin):
    twin.wait_display(scores_shown, timeout=60)
    return play_shot(twin, fallen=(1, 2, 3))  # a shot scored: the game is under way


@pytest.mark.parametrize("mpy", [False, True], ids=["sources", "mpy"])
def test_deploy_over_a_running_game_resumes_it(tmp_path, mpy):
    flash(tmp_path, cfg=CFG)
    # 1.22: an .mpy with machine code for a newer MicroPython would not load there
    with booted(tmp_path, version="1.22.2") as twin:
        scores = _game_in_progress(twin)
        mark = len(twin.displays)
        out = make_deploy(twin.usb_path, mpy=mpy)
        assert out.returncode == 0, out.stdout + out.stderr
        said = re.search(r"copied (\d+) files.*\((\d+) unchanged", out.stdout)
        copied, kept = int(said.group(1)), int(said.group(2))
        if mpy:  # the board had the sources: every module is new to it
            assert copied > 40 and kept < 5, out.stdout
        else:  # the very files it has are kept; main.py, which the hold set aside, comes back
            assert copied == 1 and kept > 40, out.stdout
        # copied, reset into the new firmware, which started by itself; no watchdog ran
        # while deploy worked (on a slow machine the watchdog may beat the hold itself,
        # which deploy then sends again: tools/board/deploy.py, `hold`)
        resets = twin.resets
        assert resets[-1] == "HARD" and "WDT" not in resets[resets.index("HARD"):], resets
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
        armed = _spy_while_armed(twin)
        mark = len(twin.displays)
        out = run_deploy(twin.usb_path)
        assert out.returncode == 1
        assert "MicroPython 1.30.0" in out.stderr and "1.22 to 1.29" in out.stderr
        # reset back into the firmware it had: the game goes on
        twin.wait_display(lambda text: "HArd" in text, timeout=60, since=mark)
        twin.wait_display(lambda text: text == scores, timeout=60, since=mark)
        # deploy asked the board nothing while its watchdog ran: it held the firmware first
        _only_the_hold(armed)
    files = list_flash(tmp_path)
    assert "main.py" in files and not {"main.py.off", "deploy.hold"} & set(files), files


def test_check_board_names_what_deploy_cannot_do():
    from tools.sim.board.esp32.espsys import mpy_of

    for minor in (22, 23, 24, 29):
        assert deploy.check_board((1, minor, 0), mpy_of((1, minor))) is None
    for minor in (20, 21, 30):  # 1.20-1.21: docs/esp32.md, "Releases"
        assert "1.22 to 1.29" in deploy.check_board((1, minor, 0), mpy_of((1, minor)))
    frozen = deploy.check_board((1, 24, 1), mpy_of((1, 24)), frozen=True, copies=[])
    assert "frozen build" in frozen and "--remove-copies" not in frozen
    shadowed = deploy.check_board((1, 24, 1), mpy_of((1, 24)), True, ["firmware"], "/dev/x")
    assert "/firmware from an earlier deploy" in shadowed
    assert "tools.deploy --port /dev/x --remove-copies" in shadowed


def test_sources_go_only_to_a_board_whose_heap_they_fit():
    # a stock ESP32 without PSRAM: 111,936 bytes at most; with PSRAM, megabytes
    stock, psram = releases.ONE_GROWTH, 4 * 1024 * 1024
    refused = deploy.check_board((1, 29, 0), 6, sources=True, heap_free=stock - 2000)
    assert "no PSRAM" in refused and "without --src" in refused
    assert deploy.check_board((1, 29, 0), 6, sources=True, heap_free=psram) is None
    assert deploy.check_board((1, 29, 0), 6, heap_free=stock) is None  # .mpy files fit
    # TLS on a board without PSRAM: a note, not a refusal (docs/building.md)
    assert "Err 76" in deploy.heap_advice(stock, tls=True)
    assert deploy.heap_advice(stock, tls=False) is None
    assert deploy.heap_advice(psram, tls=True) is None


class _Probe:
    has_tls = 0


def test_tls_is_what_the_copied_settings_say_else_the_boards():
    tls = {"net": {"ssid": "club", "tls": True}}
    plain = {"net": {"ssid": "club"}}
    assert deploy._tls(_Probe(), None, json.dumps(tls).encode())
    assert not deploy._tls(_Probe(), b"CA", json.dumps(plain).encode())
    assert deploy._tls(_Probe(), b"CA", None)  # a CA copied, its settings kept
    board = _Probe()
    board.has_tls = 1
    assert deploy._tls(board, None, None)
    assert not deploy._tls(board, None, json.dumps(plain).encode())


HEAP_INTERPRETER = upy.release_binary(releases.LATEST[releases.NEWEST], bits=32)


def test_sources_are_refused_on_a_stock_esp32_and_the_game_goes_on(tmp_path):
    """`make deploy SRC=1` onto a board without PSRAM: the board would compile the
    sources into a heap they do not fit and stop at power-up with Err 93; deploy reads
    the board's free heap, refuses, and lets the game go on."""
    if HEAP_INTERPRETER is None:
        pytest.skip("no 32-bit interpreter of MicroPython %d.%d (docs/performance.md)"
                    % releases.NEWEST)
    flash(tmp_path, cfg=CFG, mpy=True)
    with booted(tmp_path, version="1.29.0", interpreter=HEAP_INTERPRETER,
                heap="esp32") as twin:
        scores = _game_in_progress(twin)
        mark = len(twin.displays)
        out = make_deploy(twin.usb_path, mpy=False)
        assert out.returncode != 0, out.stdout + out.stderr
        said = re.search(r"the board has (\d+) bytes of heap free, no PSRAM", out.stderr)
        assert said and int(said.group(1)) <= releases.ONE_GROWTH, out.stdout + out.stderr
        twin.wait_display(lambda text: "HArd" in text, timeout=60, since=mark)
        twin.wait_display(lambda text: text == scores, timeout=60, since=mark)
        assert play_shot(twin, fallen=(4,)) != scores  # the game goes on
    files = list_flash(tmp_path, "rules_core")
    assert "game.mpy" in files and "game.py" not in files, files


def test_mpy_files_are_bytecode_only_and_native_modules_stay_sources(tmp_path):
    staged = deploy.stage(str(tmp_path), mpy=True)
    assert "boardlib/crc32.py" in staged and "boardlib/cobs.py" in staged  # viper inside
    assert "rules_core/game.mpy" in staged and "main.py" in staged
    for target in staged:
        if target.endswith(".mpy"):
            assert not mpycross.has_native_code(str(tmp_path / target)), target


def test_uart0_link_needs_safe_mode_to_get_back_in_and_the_game_survives(tmp_path):
    flash(tmp_path, cfg={"watchdog_ms": 2000, "link": "uart0"})
    with booted(tmp_path) as twin:
        scores = _game_in_progress(twin)
        # Ctrl-C is a data byte for the link now: the REPL never answers
        out = run_deploy(twin.usb_path, "--wait", "4")
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


def _spy_while_armed(twin):
    """What the host sends the board while its watchdog is armed, from now on."""
    sent = []
    to_chip = twin._to_chip

    def spy(data):
        if twin.wdt_ms is not None:
            sent.append(bytes(data))
        to_chip(data)

    twin._to_chip = spy
    return sent


def _only_the_hold(armed):
    """While the watchdog ran, the board was sent the hold and nothing else of deploy's:
    not its probe (sys.implementation), not a removal (os.ilistdir), not a file."""
    sent = b"".join(armed)
    assert deploy.HOLD_FILE.encode() in sent, sent
    for word in (b"implementation", b"ilistdir", b"a2b_base64"):
        assert word not in sent, sent


def test_remove_copies_works_with_no_watchdog_running(tmp_path):
    """A frozen board whose flash holds a copy of the firmware and a folder of 200 old
    modules beside it, on a worn flash chip (the datasheet's maximum times: removing them
    takes about 3 s of erases and programs), with a 2 s watchdog. Deploy holds the
    firmware and resets the board before it asks or changes anything: `--remove-copies`
    runs with no watchdog, the copies are gone and the game goes on."""
    old = {"firmware/old/module%03d.py" % i: "# an older module\n" * 12 for i in range(200)}
    flash(tmp_path, cfg=CFG, files=old)
    frozen.build(str(tmp_path))
    with booted(tmp_path, flash="max") as twin:
        twin.wait_display(scores_shown, timeout=60)
        scores = play_shot(twin, fallen=(1, 2))
        armed = _spy_while_armed(twin)

        mark = len(twin.displays)
        out = run_deploy(twin.usb_path, "--remove-copies")
        assert out.returncode == 0, out.stdout + out.stderr
        assert "removed /boardlib, /firmware, /rules_core" in out.stdout
        twin.wait_display(lambda text: text == scores, timeout=60, since=mark)
        assert "WDT" not in twin.resets, twin.resets
        _only_the_hold(armed)
    files = list_flash(tmp_path)
    assert not {"boardlib", "firmware", "rules_core", "deploy.hold"} & set(files), files
    assert {"board.cfg", "game", "main.py"} <= set(files), files


def test_deploy_without_resets_refuses_a_running_scoreboard(tmp_path):
    """--no-reset is for a board whose firmware is not running: one that is has a watchdog
    nothing stops, which would reset the board in the middle of the copy."""
    flash(tmp_path, cfg=CFG)
    with booted(tmp_path) as twin:
        twin.wait_display(scores_shown, timeout=60)
        out = run_deploy(twin.usb_path, "--no-reset")
        assert out.returncode == 1 and "without --no-reset" in out.stderr, out.stderr
        assert "copied" not in out.stdout
