"""Type-check the device code against the published ESP32 MicroPython stubs.

    python -m tools.testing.typecheck             # rules_core, boardlib, firmware
    python -m tools.testing.typecheck FILE ...    # other device code, the same way

The unix port accepts calls the ESP32 port does not have (and the simulator's fake pins
accept anything), so a misspelt or missing ESP32 API, `Pin(13).valu()` say, would pass every
test and fail on the first real board. mypy checks the code against
`micropython-esp32-stubs` (the ESP32 port's `machine`, `esp32`, `time`, ... as published
for the pinned MicroPython version) with `micropython-stdlib-stubs` as the standard library
in place of CPython's. Both are pinned in requirements.txt; their .pyi files are linked
into build/esp32-stubs, away from the other packages of the venv. The mypy settings (and
why some checks are off) are under [tool.mypy] in pyproject.toml.

Exit status: 0 clean, 1 type errors (listed as FILE:LINE: error: ...), 2 the checker or
the stubs are missing.
"""

import os
import subprocess
import sys
from importlib import metadata

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
STUB_DISTS = ("micropython-esp32-stubs", "micropython-stdlib-stubs")
STUB_DIR = os.path.join(ROOT, "build", "esp32-stubs")
CACHE_DIR = os.path.join(ROOT, "build", "mypy-cache")
DEVICE_CODE = ("rules_core", "boardlib", "firmware")


def _stub_files(dist):
    """(path inside the stub tree, absolute path) of every stub file of one distribution."""
    d = metadata.distribution(dist)
    for f in d.files or ():
        name = str(f)
        if name.endswith(".pyi") or name.endswith("/VERSIONS"):
            yield name, os.path.abspath(str(d.locate_file(f)))


def stub_tree(target=STUB_DIR):
    """Link the stubs into `target`: ESP32 modules at the top, the standard library under
    stdlib/ (the layout mypy's --custom-typeshed-dir wants). Returns the folder."""
    versions = []
    for dist in STUB_DISTS:
        try:
            versions.append("%s==%s" % (dist, metadata.version(dist)))
        except metadata.PackageNotFoundError:
            raise SystemExit("typecheck: %s is not installed (make venv)" % dist) from None
    stamp = os.path.join(target, ".versions")
    wanted = "\n".join(versions)
    try:
        with open(stamp) as f:
            if f.read() == wanted:
                return target
    except OSError:
        pass
    for dist in STUB_DISTS:
        for name, source in _stub_files(dist):
            path = os.path.join(target, name)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            if os.path.lexists(path):
                os.remove(path)
            os.symlink(source, path)
    with open(stamp, "w") as f:
        f.write(wanted)
    return target


def command(paths, stubs):
    return [
        sys.executable, "-m", "mypy", "--config-file", os.path.join(ROOT, "pyproject.toml"),
        "--custom-typeshed-dir", stubs, "--no-site-packages", "--cache-dir", CACHE_DIR,
        *paths,
    ]


def run(paths=DEVICE_CODE, capture=False):
    """Run the check; a CompletedProcess (output captured when `capture`)."""
    stubs = stub_tree()
    env = dict(os.environ, MYPYPATH=stubs)
    return subprocess.run(command(list(paths), stubs), cwd=ROOT, env=env, text=True,
                          capture_output=capture, check=False)


def main(argv):
    try:
        import mypy  # noqa: F401
    except ImportError:
        sys.stderr.write("typecheck: mypy is not installed (make venv)\n")
        return 2
    proc = run(argv or DEVICE_CODE)
    return 0 if proc.returncode == 0 else (1 if proc.returncode == 1 else 2)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
