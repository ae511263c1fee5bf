"""Installing with mip, then a frozen build, on the ESP32 twin (README, docs/esp32.md).

One board through what a builder may do to it: the README's `mip.install(..., target="/")`
on a stock MicroPython (mip fetches this repository's package.json over 127.0.0.1, as it
would from github) and the scoreboard starts at the next reset; then the board is flashed
with a build that freezes firmware/manifest.py (tools/sim/board/frozen.py: its modules
outside the flash filesystem). The frozen build runs, not the copies mip left on the flash
(two are made to fail if imported), names them at boot, and resumes the game; `make deploy`
is refused with a plain message and the game goes on; `make check` runs the frozen wiring
check; `--remove-copies` clears the copies.
"""

import contextlib
import hashlib
import http.server
import json
import os
import select
import signal
import subprocess
import sys
import threading
import time

import pytest
from twin_helpers import (
    booted,
    flash,
    list_flash,
    make_deploy,
    mpremote,
    play_shot,
    run_deploy,
    scores_shown,
)

from tools.port import upy
from tools.sim.board import frozen

pytestmark = [pytest.mark.long(36), pytest.mark.realtime]

CFG = {"watchdog_ms": 8000}  # the default: armed, and longer than a loaded host's pauses
STALE = "raise RuntimeError('a stale copy ran')\n"  # as firmware/run.py and check.py
COPIES = ("/boardlib", "/firmware", "/rules_core")


def _resumes(twin, scores, mark):
    twin.wait_display(lambda text: "HArd" in text, timeout=60, since=mark)
    twin.wait_display(lambda text: text == scores, timeout=60, since=mark)


class _Index(http.server.SimpleHTTPRequestHandler):
    """This repository as github serves it to mip (/repo/...), and micropython-lib's index
    (/pi/...) with the pinned umqtt.simple: mip on the twin reaches both on 127.0.0.1."""

    files = {}

    def do_GET(self):  # noqa: N802 - the http.server name
        body = self.files.get(self.path)
        if body is None and self.path.startswith("/repo/"):
            path = os.path.join(upy.ROOT, self.path[len("/repo/"):])
            if os.path.isfile(path):
                with open(path, "rb") as f:
                    body = f.read()
        self.send_response(200 if body is not None else 404)
        self.send_header("Content-Length", str(len(body or b"")))
        self.end_headers()
        self.wfile.write(body or b"")

    def log_message(self, *args):
        pass


@contextlib.contextmanager
def _index():
    with open(os.path.join(upy.UPYLIB, "umqtt", "simple.py"), "rb") as f:
        umqtt = f.read()
    short = hashlib.sha256(umqtt).hexdigest()[:8]
    with open(os.path.join(upy.ROOT, "package.json")) as f:
        (dep, version), = json.load(f)["deps"]  # the release package.json asks for
    assert dep == "umqtt.simple"
    _Index.files = {
        "/pi/package/6/umqtt.simple/%s.json" % version: json.dumps(
            {"hashes": [["umqtt/simple.py", short]], "version": version}).encode(),
        "/pi/file/%s/%s" % (short[:2], short): umqtt,
    }
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Index)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield "http://127.0.0.1:%d" % server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


def test_mip_install_then_a_frozen_build_over_its_files(tmp_path):
    # The README's mip line on a stock board with an empty flash (its REPL is free):
    # target="/" puts boot.py and main.py where the board runs them. The release's own
    # mip: 1.25's resolves package.json's relative URLs (mip 0.4; 1.22-1.24 cannot).
    with _index() as url, booted(tmp_path, version="1.25.0") as twin:
        code = "import mip; mip.install(%r, index=%r, target='/')" % (
            url + "/repo/package.json", url + "/pi")
        out = mpremote(twin.usb_path, "exec", code, timeout=120)
        assert out.returncode == 0 and "Done" in out.stdout, out.stdout + out.stderr
        assert "Copying: //main.py" in out.stdout, out.stdout
        twin.power_cycle()
        twin.wait_display(scores_shown, timeout=60)
        scores = play_shot(twin, fallen=(1, 2, 3))
    assert {"boot.py", "main.py", "firmware", "rules_core", "boardlib", "umqtt"} <= set(
        list_flash(tmp_path))

    # Then the board is flashed with a frozen build; its filesystem keeps those files.
    # Older firmware.run and firmware.check among them would fail if they were imported.
    names = frozen.build(str(tmp_path))
    assert "main.py" in names and "firmware/run.py" in names and "boot.py" not in names
    flash(tmp_path, cfg=CFG, firmware=False,
          files={"firmware/run.py": STALE, "firmware/check.py": STALE})
    with booted(tmp_path) as twin:
        twin.wait_display(lambda text: text == scores, timeout=60)  # the game goes on
        out = bytes(twin.output).decode(errors="replace")
        assert "stale copy" not in out, out
        for copy in COPIES:
            assert "main.py: %s on the flash is not used: the firmware is frozen" % copy in out

        mark = len(twin.displays)
        run = make_deploy(twin.usb_path)
        assert run.returncode != 0, run.stdout + run.stderr
        assert "runs a frozen build of the firmware" in run.stderr, run.stderr
        assert ("holds /boardlib, /firmware, /rules_core from an earlier deploy" in run.stderr
                and "--remove-copies" in run.stderr), run.stderr
        assert "copied" not in run.stdout  # nothing was copied
        _resumes(twin, scores, mark)

        # the wiring check (make check) runs the frozen build's too, then the game again
        mark = len(twin.displays)
        run = subprocess.run([sys.executable, "-m", "tools.check", "--port", twin.usb_path,
                              "--seconds", "1"], capture_output=True, text=True,
                             timeout=120, cwd=upy.ROOT)
        assert run.returncode == 0 and run.stdout.splitlines()[-1] == "check: done", (
            run.stdout + run.stderr)
        twin.wait_display(lambda text: text == scores, timeout=60, since=mark)

        mark = len(twin.displays)
        run = run_deploy(twin.usb_path, "--remove-copies")
        assert run.returncode == 0 and "removed /boardlib, /firmware, /rules_core" in run.stdout
        _resumes(twin, scores, mark)
        assert play_shot(twin, fallen=(4,)) != scores
        assert "WDT" not in twin.resets, twin.resets
    files = list_flash(tmp_path)
    assert not set(files) & {"boardlib", "firmware", "rules_core"}, files
    assert {"board.cfg", "game"} <= set(files), files  # the settings and the game are kept


def _wait_for_boot(port, timeout=60):
    """Read the twin's USB serial until its ROM's reset banner: the chip has started and is
    about to run boot.py. A Ctrl-C sent before, while the chip formats its blank flash (in
    the flash's real time), is a byte for the REPL, as on the ESP32 (its interrupt
    character is on only while code runs): mpremote would wait for a raw REPL that never
    comes. The twin holds the port open, so the banner waits there to be read."""
    fd = os.open(port, os.O_RDONLY | os.O_NOCTTY | os.O_NONBLOCK)
    try:
        seen = b""
        deadline = time.monotonic() + timeout
        while b"POWERON_RESET" not in seen:
            left = deadline - time.monotonic()
            assert left > 0, seen
            if select.select([fd], [], [], left)[0]:
                seen = seen[-64:] + os.read(fd, 4096)
    finally:
        os.close(fd)


def test_sim_frozen_flashes_the_build_and_stock_takes_it_away(tmp_path):
    def sim(*flags):
        return subprocess.Popen([sys.executable, "-m", "tools.sim", "--state", str(tmp_path),
                                 *flags], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, cwd=upy.ROOT)

    probe = os.path.join(os.path.dirname(__file__), "board_programs", "frozen_place.py")
    # the build first, then the stock release's own frozen modules (/.port), then the unix
    # port's (.frozen: asyncio), all before /lib
    for flags, path, errno in ((("--usb", "--frozen"),
                                "['', '/.frozen', '/.port', '.frozen', '/lib']", 30),
                               (("--usb", "--stock"), "['', '/.port', '.frozen', '/lib']", 2)):
        proc = sim(*flags)
        try:
            first = proc.stdout.readline()
            assert first.startswith("usb: /dev/pts/"), first
            built = os.path.isfile(os.path.join(frozen.folder(str(tmp_path)), "main.py"))
            assert built == (errno == 30)
            _wait_for_boot(first.split()[1])
            out = mpremote(first.split()[1], "resume", "run", probe)
            # the build is where the ESP32 has .frozen, and the board cannot write it (EROFS)
            assert out.stdout.splitlines() == [path, "errno %d" % errno], out.stdout + out.stderr
        finally:
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(timeout=20) == 0
    proc = sim("--frozen")
    assert proc.wait(timeout=60) == 2 and "need --usb" in proc.stderr.read()
