"""Copy the firmware to an ESP32 running MicroPython, over its USB-serial port.

    python -m tools.deploy --port /dev/ttyUSB0          # compiled with mpy-cross (.mpy)
    python -m tools.deploy --port /dev/ttyUSB0 --src    # sources, compiled by the board
    python -m tools.deploy --port /dev/ttyUSB0 --net    # umqtt too, with no net settings yet
    python -m tools.deploy --port /dev/ttyUSB0 --ca club/ca.der   # the club's CA, for TLS
    python -m tools.deploy --port /dev/ttyUSB0 --config board.cfg # checked, as /board.cfg
    python -m tools.deploy --list                       # what would be copied

The board gets `rules_core/`, `boardlib/` and `firmware/` as packages at the root of its
filesystem, and `firmware/boot.py` and `firmware/main.py` as its `boot.py` and `main.py`.
The modules go as `.mpy` files by default (`--src`: sources): a board that compiles the
sources itself needs more heap than a stock ESP32 has (docs/building.md, "Which deployment
fits which board").
A board whose /board.cfg has `net` settings (or any board, with --net) also gets the MQTT
client the network link imports, micropython-lib's `umqtt.simple`, in `lib/umqtt/`: the
very files `make test` runs, the release pinned with its hash in upy-requirements.txt
(unpacked into .venv/upylib by `make venv`), not a download at deploy time.
The files are staged in `build/deploy/` first, so nothing else in the tree reaches it.

A board that runs the scoreboard has an armed watchdog that nothing can stop, and may
have its REPL's Ctrl-C turned off (`link: "uart0"`). So a deploy (docs/esp32.md):
1. interrupts the firmware and, in one short command, holds it: renames `main.py` to
   `main.py.off` and writes `/deploy.hold` (a frozen build's own main.py, which no rename
   reaches, waits while it is there); then hard-resets the board: it comes back without
   starting the firmware, so without the watchdog and with the REPL free. Nothing else
   happens while the watchdog runs, however long the flash takes to erase;
2. checks the board's MicroPython version (supported: SUPPORTED below) and that the
   firmware is not a frozen build (a frozen build runs its own packages: `--remove-copies`
   removes copies an earlier deploy left on its flash); a refusal lets the firmware go
   (`main.py` back, `/deploy.hold` removed) and resets the board into its game;
3. copies every file (main.py last), checks them by SHA-256, removes `main.py.off` and
   `/deploy.hold`;
4. hard-resets the board: the new firmware starts by itself and resumes the game.
A deploy cut short leaves a board that starts without the firmware: run it again.
"""

import argparse
import base64
import hashlib
import json
import os
import shutil
import sys
import time

from tools.port import mpycross, upylib
from tools.sim.board.esp32 import releases

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PACKAGES = ("rules_core", "boardlib", "firmware")
ENTRY = ("boot.py", "main.py")
# First and last MicroPython minor versions deploy accepts: tools/sim/board/esp32/releases.py
# (the firmware refuses older ones at boot too: Err 92, firmware.errors.MICROPYTHON_OLDEST).
SUPPORTED = (releases.OLDEST[:2], releases.NEWEST)
CHUNK = 2048  # bytes one raw-REPL command writes (about 3 KB of source to compile)
BOOT_WAIT_S = 20.0  # after a reset: the board boots
ANSWER_WAIT_S = 15.0  # a board that is up answers at once (a loaded host: slower)

# Holds the firmware (step 1 above): the one command deploy runs while the firmware's
# watchdog may be armed. A rename and a small file: littlefs makes each whole or not at all.
HOLD_FILE = "/deploy.hold"
HOLD = """import os
try:
 os.rename('main.py', 'main.py.off')
except OSError:
 pass
open(%r, 'w').close()
""" % HOLD_FILE
# Lets the firmware go again: main.py back if nothing replaced it (a refusal), else the old
# one dropped (a deploy copied a new one), and no hold.
UNHOLD = """import os
try:
 os.stat('main.py')
 _k = 1
except OSError:
 _k = 0
try:
 if _k:
  os.remove('main.py.off')
 else:
  os.rename('main.py.off', 'main.py')
except OSError:
 pass
try:
 os.remove(%r)
except OSError:
 pass
""" % HOLD_FILE
HOLD_TRIES = 3  # a board reset by its watchdog before the hold landed is held again

# What deploy asks the board: version, .mpy version, whether the firmware is frozen, the
# copies of its packages on the flash, net settings, whether the firmware ran this boot
# (it arms the watchdog once the game is loaded: firmware.app imported), whether the
# board is held, its free heap (from 1.22 `gc.mem_free()` counts the ESP-IDF block the
# heap can still grow by: docs/esp32.md) and whether its settings ask for TLS. A frozen
# module's __file__ does not say that it is frozen
# (py/builtinimport.c drops the '.frozen/' prefix): the probe imports the package again
# from sys.path without the flash ('' and '/lib'), then puts things back.
PROBE = """import sys, os
_p = sys.path[:]
_o = sys.modules.pop('firmware', None)
sys.path[:] = [e for e in _p if e not in ('', '/lib')]
try:
    import firmware
    _f = 1
except ImportError:
    _f = 0
sys.path[:] = _p
sys.modules.pop('firmware', None)
if _o is not None:
    sys.modules['firmware'] = _o
_k = sorted(n for n in os.listdir() if n in %r)
_n = _t = 0
try:
    import json
    with open('board.cfg') as _c:
        _j = json.load(_c)
    _n = int('net' in _j)
    _t = int(_j['net'].get('tls') is True)
except Exception:
    pass
import gc
gc.collect()
try:
    os.stat(%r)
    _h = 1
except OSError:
    _h = 0
print(repr((tuple(sys.implementation.version[:3]), getattr(sys.implementation, '_mpy', 0),
            _f, _k, _n, int('firmware.app' in sys.modules), _h, gc.mem_free(), _t)))
""" % (PACKAGES, HOLD_FILE)
# Removes folders from the board's flash (the copies a frozen build does not use).
REMOVE = """import os
def _rm(p):
    for e in os.ilistdir(p):
        q = p + '/' + e[0]
        if e[1] == 0x4000:
            _rm(q)
        else:
            os.remove(q)
    os.rmdir(p)
for p in %r:
    _rm(p)
"""


class DeployError(Exception):
    pass


# The firmware ran this boot (and so armed its watchdog): with --no-reset deploy cannot
# stop it; after a held reset, the board's main.py does not know the hold (a frozen build
# made before it), so the firmware keeps starting.
RAN = ("the scoreboard was running on the board and its watchdog cannot be stopped: deploy "
       "without --no-reset (it resets the board into a boot without the firmware first)")
RAN_WITH_HOLD = ("the board's firmware starts although deploy holds it (%s): its main.py is "
                 "older than this deploy (a frozen build?). Hold undo while you reset the "
                 "board (safe mode: the display says SAFE), then run deploy again with "
                 "--no-reset" % HOLD_FILE)


# A board whose heap has less free than this has no PSRAM (an ESP32's internal RAM is
# 520 KB in all; a stock image without PSRAM gives MicroPython 111,936 bytes once its heap
# has grown). The sources need more than such a board has while it compiles them: their
# import peak is about 130 KB playing and more than 250 KB networked (make bench,
# ram32_peak_net_src_bytes; docs/building.md, "Which deployment fits which board").
PSRAM_FREE = 320 * 1024
SOURCES_DO_NOT_FIT = (
    "the board has %d bytes of heap free, no PSRAM: compiling the sources needs more "
    "than 250 KB (docs/building.md, \"Which deployment fits which board\"), so it would "
    "stop at power-up with Err 93. Deploy without --src (.mpy files, which fit), or use "
    "a board with PSRAM and MicroPython's ESP32_GENERIC-SPIRAM image")
TLS_WITHOUT_PSRAM = (
    "note: this board has no PSRAM (%d bytes of heap free). Over TLS it comes online while "
    "no game is stored; powered up with a game stored it plays it, but in some starts "
    "finds no room for TLS and shows Err 76 until it starts without one. A club's TLS "
    "boards want PSRAM (the ESP32_GENERIC-SPIRAM image) or a frozen build "
    "(docs/building.md, \"Which deployment fits which board\")")


def heap_advice(heap_free, tls):
    """What a builder should know of this board's heap before playing over TLS, or None."""
    if tls and heap_free < PSRAM_FREE:
        return TLS_WITHOUT_PSRAM % heap_free
    return None


def device_files():
    """(source path, path on the board) for every module the board runs."""
    out = []
    for package in PACKAGES:
        for folder, dirs, files in os.walk(os.path.join(ROOT, package)):
            dirs[:] = sorted(d for d in dirs if not d.startswith("__"))
            for name in sorted(files):
                if not name.endswith(".py"):
                    continue
                src = os.path.join(folder, name)
                rel = os.path.relpath(src, ROOT).replace(os.sep, "/")
                if rel in ("firmware/manifest.py", "firmware/frozen.py"):
                    continue  # build-time only; run by a frozen build only
                if rel in ("firmware/boot.py", "firmware/main.py"):
                    rel = name  # the board runs these from its root
                out.append((src, rel))
    return out


VERSION = "0.1.0"
# micropython-lib's MQTT client, which the network link imports: the release pinned in
# upy-requirements.txt, which `make test` runs. `make deploy` copies those files from
# .venv/upylib; mip (package.json) asks micropython-lib's index for the same version.
UMQTT = "umqtt.simple"
UMQTT_VERSION = {name: version for name, version, _ in upylib.pins()}[
    "micropython-" + UMQTT]
DEPS = [[UMQTT, UMQTT_VERSION]]
LIBRARIES = ("umqtt",)  # packages in .venv/upylib that go to the board's lib/


def library_files():
    """(source, path on the board) of the pinned micropython-lib modules, `lib/umqtt/...`."""
    out = []
    for package in LIBRARIES:
        folder = os.path.join(upylib.TARGET, package)
        if not os.path.isdir(folder) or not os.path.exists(
                upylib.stamp("micropython-" + UMQTT, UMQTT_VERSION)):
            raise DeployError("%s %s is not in .venv/upylib: run make venv first"
                              % (UMQTT, UMQTT_VERSION))
        for name in sorted(os.listdir(folder)):
            if name.endswith(".py"):
                out.append((os.path.join(folder, name), "lib/%s/%s" % (package, name)))
    return out


def package_json():
    """The `mip` package description: every board module, from its place in this repo.

    Install on a board with network:  mip.install("github:OWNER/REPO", target="/")"""
    urls = [[target, os.path.relpath(src, ROOT).replace(os.sep, "/")]
            for src, target in device_files()]
    return json.dumps({"urls": urls, "deps": DEPS, "version": VERSION}, indent=2) + "\n"




def compile_mpy(src, mpy_path, target=None):
    """Compiled as a board's code is (tools.port.mpycross.ESP32_FLAGS; build/mpy-cache);
    with the board file `target` ("firmware/app.py", "lib/umqtt/simple.py"), its source
    named by its module's name (mpycross.module_name; /lib is a folder of sys.path)."""
    name = None
    if target is not None:
        name = mpycross.module_name(target[4:] if target.startswith("lib/") else target)
    try:
        mpycross.compile_file(src, mpy_path, mpycross.ESP32_FLAGS, name=name)
    except mpycross.MpyCrossError as exc:
        raise DeployError(str(exc)) from None


def stage(dest, mpy=False, libraries=False):
    """Stage the board's files in dest (with `libraries`, umqtt's too). With mpy, modules
    compile to bytecode .mpy files, which every MicroPython of SUPPORTED loads (.mpy
    version 6; the sub-version only matters for machine code); a module with viper or
    native code stays a .py: the board's own compiler makes machine code of its own
    sub-version from it."""
    shutil.rmtree(dest, ignore_errors=True)
    staged = []
    files = device_files() + (library_files() if libraries else [])
    for src, target in files:
        path = os.path.join(dest, target)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if mpy and target not in ENTRY:
            mpy_path = path[:-3] + ".mpy"
            compile_mpy(src, mpy_path, target)
            if not mpycross.has_native_code(mpy_path):
                staged.append(target[:-3] + ".mpy")
                continue
            os.remove(mpy_path)
        shutil.copyfile(src, path)
        staged.append(target)
    return staged


def check_board(version, mpy, frozen=False, copies=(), port="PORT", sources=False,
                heap_free=None):
    """Why deploy must not copy to this board (a sentence), or None.

    frozen: the board runs a frozen build (firmware/manifest.py); copies: the packages
    found on its flash; sources: the sources are to be copied (--src), to a board with
    heap_free bytes of heap free (None: not known)."""
    first, last = SUPPORTED
    supported = "MicroPython %d.%d to %d.%d" % (first + last)
    if frozen:
        problem = ("the board runs a frozen build of the firmware (firmware/manifest.py), "
                   "which runs its own packages, not copied ones: flash a new build made "
                   "with firmware/manifest.py instead")
        if copies:
            problem += (". Its flash also holds %s from an earlier deploy, which the frozen "
                        "build does not use: python -m tools.deploy --port %s "
                        "--remove-copies removes them (the game is kept)"
                        % (", ".join("/" + c for c in copies), port))
        return problem
    if tuple(version[:2]) < first or tuple(version[:2]) > last:
        return ("the board runs MicroPython %s; this firmware supports %s: flash a "
                "supported MicroPython first (micropython.org/download/ESP32_GENERIC)"
                % (".".join(str(v) for v in version), supported))
    if mpy and mpy & 0xFF != 6:
        return "the board loads .mpy version %d, not 6: flash %s" % (mpy & 0xFF, supported)
    if sources and heap_free is not None and heap_free < PSRAM_FREE:
        return SOURCES_DO_NOT_FIT % heap_free
    return None


# -- the board ------------------------------------------------------------------------------------


class Board:
    """The board's raw REPL through mpremote's serial transport."""

    def __init__(self, port):
        from mpremote.transport_serial import SerialTransport

        self.port = port
        # A read timeout: a board that resets mid-command, or one that keeps talking (a
        # uart0 link) on a pty, which mpremote reads blocking, must not hang the deploy.
        self.t = SerialTransport(port, baudrate=115200, timeout=1)

    def enter(self, timeout=10):
        self.t.enter_raw_repl(soft_reset=False, timeout_overall=timeout)

    def run(self, code):
        return self.t.exec(code).decode()

    def reset(self):
        """machine.reset(): a hard reset, as a power-up with the flash kept."""
        self.t.exec_raw_no_follow("import machine\nmachine.reset()")
        self.close()

    def close(self):
        try:
            self.t.close()
        except Exception:  # the port may be gone with the reset
            pass

    def write_file(self, path, data):
        """One command per CHUNK bytes, base64 (binascii is on every ESP32 build)."""
        for i in range(0, max(len(data), 1), CHUNK):
            code = "_f.write(binascii.a2b_base64(%r))" % base64.b64encode(
                data[i:i + CHUNK]).decode()
            if i == 0:
                code = "import binascii\n_f=open(%r,'wb')\n" % path + code
            if i + CHUNK >= len(data):
                code += "\n_f.close()"
            self.run(code)


def connect(port, timeout):
    """The board's raw REPL, retrying while it boots."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        board = None
        try:
            board = Board(port)
            board.enter(timeout=3)
            return board
        except Exception as exc:  # mpremote raises its own errors and OSError
            last = exc
            if board is not None:
                board.close()
            time.sleep(0.5)
    raise DeployError(
        "the board does not answer on %s (%s). If its link is \"uart0\", Ctrl-C is off while "
        "the scoreboard runs: hold undo while you reset or power it (safe mode: the display "
        "says SAFE), then deploy again." % (port, last))


# The SHA-256 of each file named that the board has (a missing one: nothing printed).
_HASHES = ("import hashlib, binascii\nfor p in %r:\n try:\n  f=open(p,'rb')\n except OSError:\n"
           "  continue\n h=hashlib.sha256()\n while True:\n  b=f.read(512)\n  if not b:\n"
           "   break\n  h.update(b)\n f.close()\n print(p, binascii.hexlify(h.digest()).decode())")


def board_hashes(board, paths):
    """{path: its SHA-256 in hex} of those of `paths` that are on the board."""
    out = board.run(_HASHES % (sorted(paths),))
    return dict(line.split() for line in out.splitlines() if len(line.split()) == 2)


def copy(board, dest, say):
    """Copy the staged tree `dest` to the board, but the files it already has as staged
    (compared by SHA-256, as `mpremote cp` does), then check every file's hash on the board.
    main.py goes last, so that a copy cut short never starts a half-copied firmware."""
    files = []
    for folder, dirs, names in os.walk(dest):
        dirs.sort()
        for name in sorted(names):
            path = os.path.join(folder, name)
            files.append((path, os.path.relpath(path, dest).replace(os.sep, "/")))
    files.sort(key=lambda f: f[1] == "main.py")  # main.py last: the firmware starts from it
    folders = sorted({t[:i] for _, t in files for i in range(len(t)) if t[i] == "/"})
    board.run("import os\nfor d in %r:\n try:\n  os.mkdir(d)\n except OSError:\n  pass"
              % (folders,))
    sums = {}
    for path, target in files:
        with open(path, "rb") as f:
            sums[target] = hashlib.sha256(f.read()).hexdigest()
    had = board_hashes(board, sums)
    total = copied = 0
    for path, target in files:
        if had.get(target) == sums[target]:
            continue  # the board has this very file
        with open(path, "rb") as f:
            data = f.read()
        board.write_file(target, data)
        total += len(data)
        copied += 1
    say("copied %d files, %d bytes (%d unchanged, kept)" % (copied, total, len(files) - copied))
    got = board_hashes(board, sums)
    bad = [t for t in sums if got.get(t) != sums[t]]
    if bad:
        raise DeployError("these files did not arrive intact: %s" % ", ".join(bad))
    # Drop what an earlier deploy of the other kind left (x.py beside x.mpy: .py wins).
    stale = []
    for target in sums:
        if target.endswith(".mpy"):
            stale.append(target[:-4] + ".py")
        elif "/" in target:
            stale.append(target[:-3] + ".mpy")
    board.run("import os\nfor p in %r:\n try:\n  os.remove(p)\n except OSError:\n  pass"
              % (stale,))


def ca_certificate(path):
    """The bytes of the club's CA certificate for the board's /ca.der (docs/network.md,
    "TLS"), or DeployError: the board's mbedtls reads DER only."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as exc:
        raise DeployError("cannot read %s (%s)" % (path, exc.strerror)) from None
    if data.lstrip().startswith(b"-----BEGIN"):
        raise DeployError("%s is PEM; the board reads DER: openssl x509 -in %s -outform der "
                          "-out ca.der (tools.broker --tls writes ca.der)" % (path, path))
    if not data.startswith(b"\x30"):
        raise DeployError("%s is not a DER certificate" % path)
    return data


def board_config(path):
    """The bytes of a board.cfg that `python -m tools.config check` takes whole, or
    DeployError saying, key by key, what is wrong with it."""
    from tools.board import config

    lines, ok = config.check_file(path)
    if not ok:
        raise DeployError("%s (nothing was copied; python -m tools.config writes one)"
                          % "; ".join(lines))
    with open(path, "rb") as f:
        return f.read()


class Probe:
    """What PROBE found on the board."""

    def __init__(self, board):
        (self.version, self.mpy, self.frozen, self.copies, self.has_net, self.ran,
         self.held, self.heap_free, self.has_tls) = eval(board.run(PROBE).strip())


def hold(board, port):
    """Step 1: hold the firmware and hard-reset the board; returns the board, connected
    again, and its Probe. The hold is the only command sent while the watchdog may be
    armed. A builder who stopped the firmware a while ago (mpremote, say) left the watchdog
    running unfed: it may reset the board before or during the command; then the firmware
    starts again, with a fresh timeout, and it is held once more."""
    for _ in range(HOLD_TRIES):
        try:
            board.run(HOLD)
            board.reset()
        except Exception:  # noqa: BLE001 - mpremote's errors: the board reset under it
            board.close()
        time.sleep(0.5)  # the chip restarts; what is sent meanwhile is lost
        board = connect(port, BOOT_WAIT_S)
        probe = Probe(board)
        if probe.held:
            return board, probe
    raise DeployError("the board kept resetting before deploy could hold its firmware "
                      "(its watchdog): hold undo while you reset it (safe mode: the display "
                      "says SAFE), then run deploy again")


def _tls(probe, ca_bytes, cfg_bytes):
    """Whether the board will connect over TLS: as the board.cfg deploy copies says, or
    (none copied) as the board's own says, or a CA is copied for it."""
    if cfg_bytes is not None:
        try:
            net = json.loads(cfg_bytes).get("net")
            return isinstance(net, dict) and net.get("tls") is True
        except ValueError:  # checked by board_config: not reached
            return False
    return bool(probe.has_tls) or ca_bytes is not None


def deploy(port, mpy=True, reset=True, say=print, net=False, remove_copies=False, ca=None,
           config=None, wait=ANSWER_WAIT_S):
    # a folder of this run's own: two deploys at once (two boards) never stage into one
    dest = os.path.join(ROOT, "build", "deploy", str(os.getpid()))
    ca_bytes = ca_certificate(ca) if ca else None
    cfg_bytes = board_config(config) if config else None
    if not remove_copies:
        stage(dest, mpy=mpy)
    board = connect(port, wait)
    try:
        if reset:
            # Come back without the firmware first: no watchdog, the REPL free, whatever
            # the firmware on the board does (even an older one).
            board, probe = hold(board, port)
        else:
            probe = Probe(board)

        def refuse(problem):
            if reset:
                board.run(UNHOLD)
                board.reset()  # back to the game it was playing
            raise DeployError(problem)

        if probe.ran:  # it started and armed its watchdog, which runs on unfed
            refuse(RAN_WITH_HOLD if reset else RAN)
        if remove_copies:
            if not probe.frozen:
                refuse("the board's firmware is not frozen: the packages on its flash are "
                       "its firmware; nothing was removed")
            board.run(REMOVE % (probe.copies,))
            say("removed %s" % (", ".join("/" + c for c in probe.copies) or "nothing"))
            if reset:
                board.run(UNHOLD)
                board.reset()
            return
        problem = check_board(probe.version, probe.mpy, probe.frozen, probe.copies, port,
                              sources=not mpy, heap_free=probe.heap_free)
        if problem:
            refuse(problem)
        say("board: MicroPython %s, %d bytes of heap free" % (
            ".".join(str(v) for v in probe.version), probe.heap_free))
        advice = heap_advice(probe.heap_free, _tls(probe, ca_bytes, cfg_bytes))
        if advice:
            say(advice)
        if probe.has_net or net or (cfg_bytes is not None and b'"net"' in cfg_bytes):
            stage(dest, mpy=mpy, libraries=True)
            say("%s %s to lib/umqtt (%s)" % (UMQTT, UMQTT_VERSION, "the board has net settings"
                                              if probe.has_net else "--net"))
        for name, data in (("ca.der", ca_bytes), ("board.cfg", cfg_bytes)):
            if data is not None:
                with open(os.path.join(dest, name), "wb") as f:
                    f.write(data)  # staged after stage() emptied the folder
        copy(board, dest, say)
        board.run(UNHOLD)
        if reset:
            say("resetting the board: the new firmware starts")
            board.reset()
    finally:
        board.close()
        shutil.rmtree(dest, ignore_errors=True)


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m tools.deploy", description=__doc__.split("\n")[0])
    p.add_argument("--port", help="the board's serial port, e.g. /dev/ttyUSB0")
    p.add_argument("--mpy", action="store_true",
                   help="copy compiled .mpy files (the default; kept for older scripts)")
    p.add_argument("--src", action="store_true",
                   help="copy the sources instead: the board compiles them into its heap, "
                   "which needs a board with PSRAM (docs/building.md); tracebacks name lines")
    p.add_argument("--net", action="store_true",
                   help="install umqtt even if the board's board.cfg has no net settings yet")
    p.add_argument("--ca", metavar="FILE",
                   help="the club's CA certificate (DER) to the board as /ca.der, for TLS")
    p.add_argument("--config", metavar="FILE",
                   help="a board.cfg (python -m tools.config) to the board as /board.cfg")
    p.add_argument("--no-reset", action="store_true",
                   help="copy only: no resets (for a board whose firmware is not running)")
    p.add_argument("--list", action="store_true", help="list what would be copied and stop")
    p.add_argument("--remove-copies", action="store_true",
                   help="a board with a frozen build: remove the unused copies of the "
                   "firmware's packages from its flash (the game is kept)")
    p.add_argument("--package-json", action="store_true", help="rewrite package.json for mip")
    p.add_argument("--wait", type=float, default=ANSWER_WAIT_S, metavar="SECONDS",
                   help="how long to wait for the board's REPL to answer (default %(default)s)")
    args = p.parse_args(argv)
    if args.package_json:
        with open(os.path.join(ROOT, "package.json"), "w") as f:
            f.write(package_json())
        return 0
    if args.list:
        try:
            extra = library_files() if args.net else []
        except DeployError as exc:
            sys.stderr.write("deploy: %s\n" % exc)
            return 1
        for _, target in device_files() + extra:
            print(target)
        return 0
    if not args.port:
        p.error("--port is required")
    if args.config:
        try:
            board_config(args.config)
        except DeployError as exc:
            sys.stderr.write("deploy: %s\n" % exc)
            return 2  # bad input: refused before the board is touched
    try:
        deploy(args.port, mpy=not args.src, reset=not args.no_reset, net=args.net,
               remove_copies=args.remove_copies, ca=args.ca, config=args.config,
               wait=args.wait)
    except DeployError as exc:
        sys.stderr.write("deploy: %s\n" % exc)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
