"""Copy the firmware to a board running MicroPython, with mpremote.

    python -m tools.deploy --port /dev/ttyUSB0          # sources, then a soft reset
    python -m tools.deploy --port /dev/ttyUSB0 --mpy    # compiled for the ESP32 first
    python -m tools.deploy --list                       # what would be copied

The board gets `rules_core/`, `boardlib/` and `firmware/` as packages at the root of its
filesystem, and `firmware/boot.py` and `firmware/main.py` as its `boot.py` and `main.py`.
The files are staged in `build/deploy/` first, so nothing else in the tree (caches, tests)
reaches the board.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGES = ("rules_core", "boardlib", "firmware")
ENTRY = ("boot.py", "main.py")


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
                if rel == "firmware/manifest.py":
                    continue  # build-time only
                if rel in ("firmware/boot.py", "firmware/main.py"):
                    rel = name  # the board runs these from its root
                out.append((src, rel))
    return out


VERSION = "0.1.0"
# micropython-lib packages the board imports (the network link's MQTT client); mip fetches
# them with the board's modules. `make test` runs the release pinned in
# upy-requirements.txt (tools.upylib).
DEPS = [["umqtt.simple", "latest"]]


def package_json():
    """The `mip` package description: every board module, from its place in this repo.

    Install on a board with network:  mip.install("github:OWNER/REPO", target="/")"""
    urls = [[target, os.path.relpath(src, ROOT).replace(os.sep, "/")]
            for src, target in device_files()]
    return json.dumps({"urls": urls, "deps": DEPS, "version": VERSION}, indent=2) + "\n"


def _tool(name):
    here = os.path.join(os.path.dirname(sys.executable), name)
    return here if os.path.exists(here) else name


def stage(dest, mpy=False):
    shutil.rmtree(dest, ignore_errors=True)
    staged = []
    for src, target in device_files():
        if mpy and target not in ENTRY:
            target = target[:-3] + ".mpy"
        path = os.path.join(dest, target)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if target.endswith(".mpy"):
            subprocess.run(
                [_tool("mpy-cross"), "-march=xtensawin", "-o", path, src], check=True
            )
        else:
            shutil.copyfile(src, path)
        staged.append(target)
    return staged


def mpremote_command(port, dest, reset=True):
    """One mpremote call: make the folders, then copy each folder's files into it.

    Folders are made by a line of Python rather than `fs mkdir` (which stops at one that
    exists) and files are named one by one rather than with `cp -r`, whose idea of where
    the board's root is differs between mpremote versions and boards."""
    folders = {}
    for dirpath, dirs, files in os.walk(dest):
        dirs.sort()
        rel = os.path.relpath(dirpath, dest).replace(os.sep, "/")
        folders[rel] = [os.path.join(dirpath, name) for name in sorted(files)]
    made = [rel for rel in sorted(folders) if rel != "."]
    mkdirs = "import os\nfor d in %r:\n try:\n  os.mkdir(d)\n except OSError:\n  pass" % (made,)
    cmd = [_tool("mpremote"), "connect", port, "resume", "exec", mkdirs]
    for rel in sorted(folders):
        if rel == ".":  # each by name: some boards cannot tell that ":" exists
            for path in folders[rel]:
                cmd += ["+", "fs", "cp", path, ":" + os.path.basename(path)]
        elif folders[rel]:
            cmd += ["+", "fs", "cp", *folders[rel], ":" + rel + "/"]
    if reset:
        cmd += ["+", "soft-reset"]
    return cmd


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m tools.deploy", description=__doc__.split("\n")[0])
    p.add_argument("--port", help="the board's serial port, e.g. /dev/ttyUSB0")
    p.add_argument("--mpy", action="store_true", help="copy compiled .mpy files")
    p.add_argument("--no-reset", action="store_true", help="leave the board running as it is")
    p.add_argument("--list", action="store_true", help="list what would be copied and stop")
    p.add_argument("--package-json", action="store_true", help="rewrite package.json for mip")
    args = p.parse_args(argv)
    if args.package_json:
        with open(os.path.join(ROOT, "package.json"), "w") as f:
            f.write(package_json())
        return 0
    if args.list:
        for _, target in device_files():
            print(target)
        return 0
    if not args.port:
        p.error("--port is required")
    dest = os.path.join(ROOT, "build", "deploy")
    stage(dest, mpy=args.mpy)
    proc = subprocess.run(mpremote_command(args.port, dest, reset=not args.no_reset))
    if proc.returncode != 0:
        sys.stderr.write("deploy: mpremote failed (exit %d)\n" % proc.returncode)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
