"""Build a MicroPython unix port from a MicroPython source tree: the 32-bit interpreter that
measures memory as an ESP32 would, or a release the twin should run as itself.

    make upy32 MICROPYTHON_SRC=~/src/micropython        # 32-bit, of that tree's release
    python -m tools.port.upybuild --src DIR [--bits 32|64] [--jobs 2] [--esp32-heap]

Builds `ports/unix` (variant standard), for 32 bits with gcc's -m32 (CFLAGS_EXTRA and
LDFLAGS_EXTRA; MICROPY_FORCE_32BIT=1 too, which the trees of 1.28 and before read and later
ones ignore), checks that what came out has 32-bit words, and puts the interpreter in
build/upy/ as micropython-X.Y.Z-32bit (or micropython-X.Y.Z for 64 bits), where
tools.port.upy.release_binary, interpreter32 and the twin (`interpreter="release"`) find
it beside ../shared/upy. Nothing is downloaded: the tree must be there (a git clone
checked out at the release's tag, or an unpacked release). Parts whose sources a tree may
lack are left out instead of failing: libffi (the ffi module is never used here), Berkeley
DB (btree), and without lib/mbedtls the TLS module (say so: the twin then runs TLS on
another interpreter, and the bench takes the TLS objects' heap on a 64-bit one); without
lib/micropython-lib only asyncio is frozen (the tests need nothing else). A release before
1.25 (no VfsRom, so no ROMFS image for the ESP32 twin to hold umqtt's bytecode outside the
heap) gets the pinned umqtt of `make venv` frozen in, as a stock ESP32 build has it.

With `--esp32-heap` the GC heap grows on demand into regions that play the ESP-IDF's heap,
as the ESP32 port's does from 1.22 (tools/port/idfheap/idfheap.c, docs/esp32.md, "The
heap"): built from a copy of the tree whose py/gc.c counts, when it doubles the heap, the
ESP32's first area instead of the unix port's (which also holds the simulator's modules),
and put in build/upy/ as micropython-X.Y.Z-32bit-esp32heap.
32 bits on a 64-bit Debian needs the 32-bit C library and gcc's multilib support:
`apt-get install gcc-multilib` (the interpreter itself then runs with libc6-i386 alone).
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile

from tools.port import upy

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "build", "upy")
WORK = os.path.join(ROOT, "build", "upy-work")  # the object files, one folder a build
# A 32-bit build on a 64-bit host (gcc-multilib): -m32 in the flags the unix port's Makefile
# adds to its own (CFLAGS_EXTRA, LDFLAGS_EXTRA), and MICROPY_FORCE_32BIT=1 for the trees
# that still read it (1.28 and before). Later Makefiles only warn about that one (their
# README's "x86 (i686) support"): alone it gave a 64-bit interpreter there.
FLAGS32 = ("MICROPY_FORCE_32BIT=1", "CFLAGS_EXTRA=-m32", "LDFLAGS_EXTRA=-m32")


# The growing heap's module (a user C module) and the header every C file of such a build
# includes first (--esp32-heap)
IDFHEAP = os.path.join(ROOT, "tools", "port", "idfheap")
# py/gc.c's gc_try_add_heap: the size a new area aims at, the heap so far (1.22 to 1.29)
DOUBLING = "MAX(total_heap, needed)"


class BuildError(Exception):
    pass


def _run(cmd, cwd=None):
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise BuildError("%s failed:\n%s" % (" ".join(cmd), (proc.stdout + proc.stderr)[-3000:]))
    return proc.stdout


def check_compiler(bits):
    """None when gcc can build for `bits`, else what to install."""
    if shutil.which("gcc") is None or shutil.which("make") is None:
        return "gcc and make are needed (apt-get install build-essential)"
    if bits != 32:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "t.c")
        with open(src, "w") as f:
            f.write("#include <stdio.h>\nint main(void) { return 0; }\n")
        proc = subprocess.run(["gcc", "-m32", src, "-o", os.path.join(tmp, "t")],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            return ("gcc cannot build 32-bit programs here: apt-get install gcc-multilib "
                    "(Debian; it brings the 32-bit C library and libgcc)")
    return None


def _version(src):
    """(1, 25, 0) and a suffix ("", "preview") from py/mpconfig.h."""
    values = {}
    with open(os.path.join(src, "py", "mpconfig.h")) as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 3 and parts[0] == "#define" and parts[1].startswith(
                    "MICROPY_VERSION_"):
                values[parts[1][len("MICROPY_VERSION_"):]] = parts[2]
    try:
        version = tuple(int(values[k].strip("()")) for k in ("MAJOR", "MINOR", "MICRO"))
    except (KeyError, ValueError):
        raise BuildError("%s is not a MicroPython source tree (py/mpconfig.h)" % src) from None
    prerelease = values.get("PRERELEASE", "0").strip("()")
    return version, ("preview" if prerelease not in ("0", "") else "")


def port_command(src, bits, jobs, work, esp32_heap=False):
    """The make command that builds the unix port of tree `src` for `bits` into
    `work`/build (writing there what it needs: a manifest, for a tree without
    micropython-lib, or of a release before 1.25, which has umqtt frozen in). With
    `esp32_heap`, `src` is the copy grow_tree made."""
    # STRIP= keeps the interpreter's symbols (ports/unix/Makefile: "a release binary with
    # all symbols"; the code is the same): the bench's instruction counts open and close
    # their window on a function's name (tools/bench/harness.py, WINDOW_EDGE)
    args = ["make", "-C", os.path.join(src, "ports", "unix"), "-j%d" % jobs,
            "BUILD=" + os.path.join(work, "build"),
            "MICROPY_PY_FFI=0", "MICROPY_PY_BTREE=0", "STRIP="]
    if bits == 32:
        args += FLAGS32
    if esp32_heap:
        # (py/gc.c adds to a void pointer where it adds an area: gcc warns, the ESP32's
        # build does not ask)
        flags = "-Wno-pointer-arith -include " + os.path.join(IDFHEAP, "idfheap.h")
        args = [a for a in args if not a.startswith("CFLAGS_EXTRA=")] + [
            "CFLAGS_EXTRA=" + ("-m32 " if bits == 32 else "") + flags,
            "USER_C_MODULES=" + os.path.dirname(IDFHEAP)]
    if not os.path.isfile(os.path.join(src, "lib", "mbedtls", "include", "mbedtls", "ssl.h")):
        args += ["MICROPY_PY_SSL=0"]
        print("upybuild: no lib/mbedtls in the tree: built without TLS")
    lines = []  # the frozen manifest, when the port's own will not do
    own = os.path.join(src, "ports", "unix", "variants", "standard", "manifest.py")
    if not os.path.isdir(os.path.join(src, "lib", "micropython-lib", "micropython")):
        lines.append('include("$(MPY_DIR)/extmod/asyncio")')
        empty = os.path.join(work, "no-micropython-lib")  # the build asks for its README
        os.makedirs(empty, exist_ok=True)
        open(os.path.join(empty, "README.md"), "w").close()
        args += ["MPY_LIB_DIR=" + empty]
        print("upybuild: no lib/micropython-lib in the tree: asyncio alone is frozen")
    if not os.path.isfile(os.path.join(src, "extmod", "vfs_rom.c")):
        # Before 1.25 the port cannot mount a ROMFS image, from which the ESP32 twin gives
        # the board umqtt's bytecode outside the heap as a stock ESP32 build freezes it
        # (ports/esp32/boards/manifest.py): frozen here instead, as there
        if os.path.isfile(os.path.join(upy.UPYLIB, "umqtt", "simple.py")):
            lines = (lines or ['include("%s")' % own]) + [
                'package("umqtt", base_path="%s")' % upy.UPYLIB]
            print("upybuild: no VfsRom in this release: umqtt (of make venv) is frozen in, "
                  "as a stock ESP32 build has it")
        else:
            print("upybuild: no VfsRom in this release and no umqtt in %s (make venv): the "
                  "twin will load umqtt's bytecode into the board's heap" % upy.UPYLIB)
    if lines:
        manifest = os.path.join(work, "manifest.py")
        with open(manifest, "w") as f:
            f.write("\n".join(lines) + "\n")
        args += ["FROZEN_MANIFEST=" + manifest]
    return args


def grow_tree(src, work):
    """A copy of tree `src` in `work`/src whose gc_try_add_heap aims a new area at the heap
    so far less what the unix port's first area has beyond the ESP32's
    (idfheap_doubling); BuildError for a tree whose py/gc.c has no such line."""
    copy = os.path.join(work, "src")
    shutil.rmtree(copy, ignore_errors=True)
    def left_out(folder, names):  # git's own files and the tree's own builds
        return [n for n in names if n == ".git" or n.startswith("build")
                and os.path.isdir(os.path.join(folder, n))]

    shutil.copytree(src, copy, symlinks=True, ignore=left_out)
    path = os.path.join(copy, "py", "gc.c")
    with open(path) as f:
        text = f.read()
    if text.count(DOUBLING) != 1:
        raise BuildError("%s: no `%s` in gc_try_add_heap: a tree without the growing heap "
                         "(MicroPython 1.22 or later is needed)" % (path, DOUBLING))
    with open(path, "w") as f:
        f.write(text.replace(DOUBLING, "MAX(idfheap_doubling(total_heap), needed)"))
    return copy


def build(src, bits=32, jobs=2, out=OUT, esp32_heap=False):
    """Build the interpreter; returns its path in `out`."""
    src = os.path.abspath(src)
    problem = check_compiler(bits)
    if problem:
        raise BuildError(problem)
    version, suffix = _version(src)
    name = "micropython-%d.%d.%d" % version + ("-" + suffix if suffix else "") + (
        "-32bit" if bits == 32 else "") + ("-esp32heap" if esp32_heap else "")
    work = os.path.join(WORK, name)
    built = os.path.join(work, "build", "micropython")
    if bits == 32 and os.path.exists(built) and not upy.is_32bit(built):
        # objects of a 64-bit build (a builder that only passed MICROPY_FORCE_32BIT=1):
        # make would count them up to date
        shutil.rmtree(os.path.join(work, "build"))
        print("upybuild: %s held a 64-bit build: built afresh" % os.path.relpath(work, ROOT))
    if os.path.exists(built):
        # linked again whatever make thinks of it (seconds): an interpreter an earlier
        # build stripped of its names would otherwise count as up to date
        os.remove(built)
    os.makedirs(work, exist_ok=True)
    if esp32_heap:
        src = grow_tree(src, work)
    args = port_command(src, bits, jobs, work, esp32_heap)
    _run(["make", "-C", os.path.join(src, "mpy-cross"), "-j%d" % jobs])
    _run(args)
    if bits == 32 and not upy.is_32bit(built):
        raise BuildError("the build gave an interpreter whose words are not 32 bits wide "
                         "(its sys.maxsize is not 2**31 - 1), so it is not put in %s: the "
                         "tree's ports/unix/Makefile took none of %s (see its README, "
                         "\"x86 (i686) support\")" % (out, " ".join(FLAGS32)))
    os.makedirs(out, exist_ok=True)
    dest = os.path.join(out, name)
    shutil.copyfile(built, dest)
    os.chmod(dest, 0o755)
    return dest


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m tools.port.upybuild",
                                description=__doc__.split("\n")[0])
    p.add_argument("--src", required=True, help="a MicroPython source tree (MICROPYTHON_SRC)")
    p.add_argument("--bits", type=int, choices=(32, 64), default=32)
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--esp32-heap", action="store_true",
                   help="a GC heap that grows into the ESP-IDF's regions, as the ESP32's "
                   "(docs/esp32.md, \"The heap\")")
    args = p.parse_args(argv)
    try:
        path = build(args.src, args.bits, args.jobs, esp32_heap=args.esp32_heap)
    except BuildError as exc:
        sys.stderr.write("upybuild: %s\n" % exc)
        return 1
    proc = subprocess.run([path, "-c", "import sys; print(sys.implementation, sys.maxsize)"],
                          capture_output=True, text=True)
    print("upybuild: %s: %s" % (path, proc.stdout.strip()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
