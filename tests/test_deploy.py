"""`make deploy PORT=...` against a board on a serial port: here the MicroPython unix port
with its REPL on a pty, reached by mpremote exactly as a USB-serial ESP32 would be.

The files land in the "board's" filesystem (the unix port's working folder), are the same
bytes as the tree's, and the application imports from them alone.
"""

import os
import subprocess
import sys

import pytest
from helpers import mpremote, repl_on_pty

from boardlib.config import save_config
from tools.board import deploy
from tools.port import upy


@pytest.fixture
def board(tmp_path):
    """A MicroPython REPL on a pty; yields (port path, the board's filesystem folder)."""
    root = tmp_path / "board"
    root.mkdir()
    env = dict(os.environ)
    env["MICROPYPATH"] = ".frozen"  # the board knows only what was copied to it
    with repl_on_pty(root, env) as port:
        yield port, root


def test_deploy_copies_every_board_module_and_they_import(board, tmp_path):
    port, root = board
    cfg = tmp_path / "my.cfg"
    save_config(str(cfg), {"display": "max7219", "buzzer_pin": 2})
    proc = subprocess.run(
        [sys.executable, "-m", "tools.deploy", "--port", port, "--no-reset", "--src",
         "--config", str(cfg)],
        capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (root / "board.cfg").read_bytes() == cfg.read_bytes()  # CONFIG=: /board.cfg
    files = deploy.device_files()
    assert sorted(t for _, t in files if "/" not in t) == ["boot.py", "main.py"]
    for src, target in files:
        with open(src, "rb") as a, open(root / target, "rb") as b:
            assert a.read() == b.read(), target
    assert (root / "main.py").read_text().strip().endswith("firmware.run.start()")
    # everything the application needs was copied: it imports on the board by itself
    out = mpremote(port, "exec", "import firmware.app, firmware.run; print('imported')")
    assert out.returncode == 0 and "imported" in out.stdout, out.stdout + out.stderr


def test_deploy_copies_compiled_modules_by_default(board):
    port, root = board
    proc = subprocess.run(  # no option: what fits a stock ESP32's heap (docs/building.md)
        [sys.executable, "-m", "tools.deploy", "--port", port, "--no-reset"],
        capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # Bytecode .mpy files load on every supported MicroPython; a module with machine code
    # (viper) stays a source, compiled by the board for its own .mpy sub-version.
    native = sorted(t for src, t in deploy.device_files()
                    if "@micropython.viper" in open(src).read()
                    or "@micropython.native" in open(src).read())
    assert native  # boardlib's CRC and COBS loops
    compiled = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.mpy"))
    expected = sorted(t[:-3] + ".mpy" for _, t in deploy.device_files()
                      if "/" in t and t not in native)
    assert compiled == expected
    # boot.py and main.py stay sources (MicroPython runs them by name), and the native ones
    assert sorted(p.relative_to(root).as_posix() for p in root.rglob("*.py")) == sorted(
        ["boot.py", "main.py"] + native)


def test_package_json_lists_every_board_module():
    import json

    with open(os.path.join(upy.ROOT, "package.json")) as f:
        package = json.load(f)
    assert package == json.loads(deploy.package_json())
    targets = [t for t, _ in package["urls"]]
    assert "rules_core/game.py" in targets and "main.py" in targets
    for _target, source in package["urls"]:
        assert os.path.exists(os.path.join(upy.ROOT, source)), source
