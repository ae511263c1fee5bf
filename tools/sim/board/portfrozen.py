"""The Python modules a stock ESP32 build of a MicroPython release freezes, read from
MicroPython's own git history: what the ESP32 twin finds in `.frozen` (umqtt and the rest).

    python -m tools.sim.board.portfrozen --src MICROPYTHON_GIT [--lib MICROPYTHON_LIB_GIT]
                                        [--out DIR] [1.22.2 1.25.0 ...]
    from tools.sim.board import portfrozen
    portfrozen.folder((1, 25, 0))     # DIR/1.25.0, or None when not made
    portfrozen.modules((1, 25, 0))    # [(target, version)] in the manifest's order

Reads `ports/esp32/boards/manifest.py` at the release's tag with the manifest functions of
tools/manifestfile.py (include, require, package, module, freeze, metadata, options), the
`require()`d packages from micropython-lib at the commit the tag's `lib/micropython-lib`
submodule points at, and writes each module as makemanifest.py would compile it (with
`__version__` of its package appended, as manifestfile.tagged_py_file does) to
OUT/<version>/, and the whole list, duplicates included, in order, to OUT/<version>/MANIFEST.
Nothing is checked out: every file comes from git objects (`git show COMMIT:PATH`), so any
clone of the two repositories with their history will do (`--lib` defaults to the
submodule inside `--src`).

Not written: `$(MPY_DIR)/extmod/asyncio` (the interpreter's own asyncio plays it, renamed as
the release table says) and the port's `$(PORT_DIR)/modules` (ESP32 start-up and drivers:
`_boot.py`, `inisetup.py`, `flashbdev.py`, ...): they are listed in MANIFEST but are not
needed by the twin, which has its own boot. OUT defaults to $PINBOARD_ESP32_FROZEN, else
`esp32-frozen` beside the extra interpreters (tools.port.upy.UPY_DIR), else build/esp32-frozen.
"""

import argparse
import os
import posixpath
import subprocess
import sys

from tools.port import upy
from tools.sim.board.esp32 import releases

LIBRARIES = ("micropython", "python-stdlib", "python-ecosys")  # manifestfile BASE_LIBRARY_NAMES
SKIPPED = ("extmod/asyncio/", "extmod/uasyncio/", "ports/esp32/modules/")  # not written


def roots():
    """Where made folders are looked for, first match wins."""
    out = []
    if os.environ.get("PINBOARD_ESP32_FROZEN"):
        out.append(os.environ["PINBOARD_ESP32_FROZEN"])
    out.append(os.path.join(upy.UPY_DIR, "esp32-frozen"))
    out.append(os.path.join(upy.ROOT, "build", "esp32-frozen"))
    return out


def name(version):
    return "%d.%d.%d" % tuple(version[:3])


def folder(version):
    """The folder of the release's frozen modules, or None when none was made."""
    for root in roots():
        path = os.path.join(root, name(version))
        if os.path.isfile(os.path.join(path, "MANIFEST")):
            return path
    return None


def modules(version):
    """[(target path, package version)] as the release's port manifest freezes them, in
    order and with any duplicates; None when the folder was not made."""
    path = folder(version)
    if path is None:
        return None
    with open(os.path.join(path, "MANIFEST")) as f:
        return [tuple(line.rstrip("\n").split("\t")[:2]) for line in f if line.strip()]


class _Git:
    """Files of one commit of a repository, from its objects."""

    def __init__(self, repo, commit):
        self.repo = repo
        self.commit = commit
        out = self._git("ls-tree", "-r", "--name-only", commit)
        self.files = set(out.splitlines())
        self.dirs = set()
        for f in self.files:
            d = posixpath.dirname(f)
            while d and d not in self.dirs:
                self.dirs.add(d)
                d = posixpath.dirname(d)

    def _git(self, *args):
        return subprocess.run(["git", "-C", self.repo, *args], capture_output=True,
                              text=True, check=True).stdout

    def read(self, path):
        return subprocess.run(["git", "-C", self.repo, "show", "%s:%s" % (self.commit, path)],
                              capture_output=True, check=True).stdout


class _Options:
    def __init__(self, **kw):
        self.__dict__.update(kw)

    def defaults(self, **kw):
        for k, v in kw.items():
            self.__dict__.setdefault(k, v)

    def __getattr__(self, name):
        return None


class PortManifest:
    """ports/esp32/boards/manifest.py of a release, run as tools/manifestfile.py runs it."""

    def __init__(self, src, lib, version):
        tag = "v%d.%d.%d" % tuple(version[:3])
        if tuple(version[:2]) == (1, 29):
            tag = "HEAD"  # 1.29.0-preview: main
        self.mpy = _Git(src, tag)
        submodule = self.mpy._git("ls-tree", tag, "lib/micropython-lib").split()[2]
        self.lib = _Git(lib, submodule)
        self.files = []  # (target, (tree, path), version)
        self.visited = set()
        self.meta = [None]

    def run(self):
        self._include(self.mpy, "ports/esp32/boards/manifest.py", {})
        return self.files

    def _vars(self, path):
        return path.replace("$(PORT_DIR)", "ports/esp32").replace("$(MPY_DIR)", "")

    def _include(self, tree, path, kw, is_require=False):
        key = (id(tree), path)
        if key in self.visited:
            return  # manifestfile: the same manifest is never run twice
        self.visited.add(key)
        if is_require:
            self.meta.append(None)
        here = posixpath.dirname(path)

        def rel(p):
            if "$(" in p:
                return self._vars(p).lstrip("/")
            return posixpath.normpath(posixpath.join(here, p))

        def include(p, **kw2):
            full = rel(p)
            if full in tree.dirs:
                full = posixpath.join(full, "manifest.py")
            self._include(self.mpy if "$(" in p else tree, full, kw2)

        def require(name, version=None, pypi=None, library=None, **kw2):
            for base in LIBRARIES:
                for d in sorted(self.lib.dirs):
                    if (d.startswith(base + "/") and posixpath.basename(d) == name
                            and d + "/manifest.py" in self.lib.files):
                        self._include(self.lib, d + "/manifest.py", kw2, is_require=True)
                        return
            raise ValueError("require(%r): not in micropython-lib" % name)

        def add(base, target, source_tree=tree):
            self.files.append((target, (source_tree, posixpath.join(base, target)),
                               self.meta[-1]))

        def search(base, package_path, files):
            if files is not None:
                for f in files:
                    add(base, posixpath.join(package_path, f) if package_path else f)
                return
            start = posixpath.join(base, package_path) if package_path else base
            if start in tree.files:
                add(base, package_path)
                return
            for f in sorted(tree.files):
                if f.startswith(start + "/") and f.endswith(".py"):
                    add(base, f[len(base) + 1:] if base else f)

        def package(package_path, files=None, base_path=".", opt=None):
            search(rel(base_path), package_path, files)

        def module(module_path, base_path=".", opt=None):
            add(rel(base_path), module_path)

        def freeze(p, script=None, opt=None):
            base = rel(p)
            if script is None:
                search(base, "", None)
            elif isinstance(script, str):
                search(base, "", [script])
            else:
                search(base, "", list(script))

        def metadata(description=None, version=None, license=None, author=None, **kw2):
            if version is not None:
                self.meta[-1] = version

        names = {"include": include, "require": require, "package": package,
                 "module": module, "freeze": freeze, "metadata": metadata,
                 "options": _Options(**kw), "add_library": lambda *a, **k: None,
                 "c_module": lambda *a, **k: None}
        exec(compile(tree.read(path).decode(), path, "exec"), names)
        if is_require:
            self.meta.pop()


def build(src, lib, version, out):
    """Write the release's frozen modules to out/<version>; returns the folder."""
    files = PortManifest(src, lib, version).run()
    dest = os.path.join(out, name(version))
    lines = []
    for target, (tree, path), package_version in files:
        if not path.startswith(SKIPPED):
            data = tree.read(path)
            if package_version and b"__version__ =" not in data:
                data += ("\n\n__version__ = %r\n" % package_version).encode()
            where = os.path.join(dest, target)
            os.makedirs(os.path.dirname(where), exist_ok=True)
            with open(where, "wb") as f:
                f.write(data)
        lines.append("%s\t%s\t%s\n" % (target, package_version or "", path))
    os.makedirs(dest, exist_ok=True)
    with open(os.path.join(dest, "MANIFEST"), "w") as f:
        f.writelines(lines)
    return dest


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m tools.sim.board.portfrozen",
                                description=__doc__.split("\n")[0])
    p.add_argument("--src", required=True, help="a git clone of micropython/micropython")
    p.add_argument("--lib", help="a git clone of micropython/micropython-lib "
                   "(default: the submodule in --src)")
    p.add_argument("--out", default=roots()[0] if os.environ.get("PINBOARD_ESP32_FROZEN")
                   else os.path.join(upy.ROOT, "build", "esp32-frozen"))
    p.add_argument("versions", nargs="*", help="default: the last release of every "
                   "supported line")
    args = p.parse_args(argv)
    lib = args.lib or os.path.join(args.src, "lib", "micropython-lib")
    versions = ([releases.parse(v) for v in args.versions] if args.versions
                else [releases.LATEST[line] for line in releases.SUPPORTED])
    for version in versions:
        try:
            dest = build(args.src, lib, version, args.out)
        except (subprocess.CalledProcessError, ValueError) as exc:
            sys.stderr.write("portfrozen: %s: %s\n" % (name(version), exc))
            return 1
        print("%s: %s" % (name(version), dest))
    return 0


if __name__ == "__main__":
    sys.exit(main())
