"""tools.port.upybuild (`make upy32`): a 32-bit build asks the compiler and the linker for
32 bits in a way the unix port's Makefile takes, and an interpreter whose words are wider is
refused, not put in build/upy under a -32bit name. Without a MicroPython tree: `make` is
stood in for by one that builds as a recent tree's Makefile does (it ignores
MICROPY_FORCE_32BIT), and the interpreter it leaves prints the sys.maxsize of the words it
was built for."""

import os

import pytest

from tools.port import upybuild

MAXSIZE = {32: 2**31 - 1, 64: 2**63 - 1}


@pytest.fixture
def tree(tmp_path, monkeypatch):
    """A MicroPython 1.29.0-preview source tree as far as the builder reads one, and the
    builder's output and work folders in tmp_path."""
    src = tmp_path / "micropython"
    (src / "py").mkdir(parents=True)
    (src / "ports" / "unix").mkdir(parents=True)
    (src / "extmod").mkdir()
    (src / "extmod" / "vfs_rom.c").write_text("")  # VfsRom: 1.25 and later
    (src / "py" / "mpconfig.h").write_text(
        "#define MICROPY_VERSION_MAJOR 1\n#define MICROPY_VERSION_MINOR 29\n"
        "#define MICROPY_VERSION_MICRO 0\n#define MICROPY_VERSION_PRERELEASE 1\n")
    monkeypatch.setattr(upybuild, "WORK", str(tmp_path / "work"))
    monkeypatch.setattr(upybuild, "check_compiler", lambda bits: None)  # no gcc needed
    return src


def fake_interpreter(path, bits):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write("#!/bin/sh\necho %d\n" % MAXSIZE[bits])
    os.chmod(path, 0o755)


def recent_make(made):
    """A stand-in for _run: the unix port's make of a 1.29 tree, 32-bit only when gcc gets
    -m32 both to compile and to link; what it was asked is appended to `made`."""
    def run(cmd, cwd=None):
        made.append(cmd)
        if cmd[2].endswith(os.path.join("ports", "unix")):
            build = [a for a in cmd if a.startswith("BUILD=")][0][len("BUILD="):]
            cflags = [a.split("=", 1)[1].split() for a in cmd if a.startswith("CFLAGS_EXTRA=")]
            bits = 32 if ("LDFLAGS_EXTRA=-m32" in cmd and cflags
                          and "-m32" in cflags[-1]) else 64
            fake_interpreter(os.path.join(build, "micropython"), bits)
        return ""
    return run


def test_a_32_bit_build_is_32_bit_on_a_tree_that_ignores_force_32bit(tree, tmp_path,
                                                                      monkeypatch):
    made = []
    monkeypatch.setattr(upybuild, "_run", recent_make(made))
    path = upybuild.build(str(tree), 32, out=str(tmp_path / "out"))
    assert os.path.basename(path) == "micropython-1.29.0-preview-32bit"
    assert upybuild.upy.is_32bit(path)
    port = made[-1]
    # the older trees' switch is still given: they read it
    assert "MICROPY_FORCE_32BIT=1" in port and "CFLAGS_EXTRA=-m32" in port


def stripping_make(made):
    """The unix port's make as it treats its interpreter: linked only when it is missing
    (otherwise up to date, whatever the flags say), then stripped of its symbols unless
    STRIP is given empty (ports/unix/Makefile, py/mkrules.mk)."""
    def run(cmd, cwd=None):
        made.append(cmd)
        if cmd[2].endswith(os.path.join("ports", "unix")):
            build = [a for a in cmd if a.startswith("BUILD=")][0][len("BUILD="):]
            path = os.path.join(build, "micropython")
            if not os.path.exists(path):
                fake_interpreter(path, 32)
                if "STRIP=" not in cmd:
                    with open(path, "a") as f:
                        f.write("# stripped\n")
        return ""
    return run


def test_the_interpreter_keeps_the_names_the_bench_counts_by(tree, tmp_path, monkeypatch):
    """The bench's instruction counts open and close their window on a function's name
    (tools/bench/harness.py, WINDOW_EDGE): a stripped interpreter gave no figure at all.
    The build keeps the symbols, and an interpreter an earlier build stripped, which make
    takes as up to date, is linked again."""
    left = os.path.join(upybuild.WORK, "micropython-1.29.0-preview-32bit", "build")
    fake_interpreter(os.path.join(left, "micropython"), 32)
    with open(os.path.join(left, "micropython"), "a") as f:
        f.write("# stripped\n")
    made = []
    monkeypatch.setattr(upybuild, "_run", stripping_make(made))
    path = upybuild.build(str(tree), 32, out=str(tmp_path / "out"))
    assert "STRIP=" in made[-1]
    with open(path) as f:
        assert "stripped" not in f.read()
    assert upybuild.upy.is_32bit(path)


def test_a_64_bit_build_gets_no_32_bit_flags(tree, tmp_path, monkeypatch):
    made = []
    monkeypatch.setattr(upybuild, "_run", recent_make(made))
    path = upybuild.build(str(tree), 64, out=str(tmp_path / "out"))
    assert os.path.basename(path) == "micropython-1.29.0-preview"
    assert not any(flag in made[-1] for flag in upybuild.FLAGS32)


def test_an_interpreter_with_wider_words_is_refused(tree, tmp_path, monkeypatch):
    # a make that gives 64 bits whatever it is asked (a tree whose Makefile takes none of
    # the flags)
    def make64(cmd, cwd=None):
        if cmd[2].endswith(os.path.join("ports", "unix")):
            build = [a for a in cmd if a.startswith("BUILD=")][0][len("BUILD="):]
            fake_interpreter(os.path.join(build, "micropython"), 64)
        return ""
    monkeypatch.setattr(upybuild, "_run", make64)
    out = tmp_path / "out"
    with pytest.raises(upybuild.BuildError, match="not 32 bits wide"):
        upybuild.build(str(tree), 32, out=str(out))
    assert not (out / "micropython-1.29.0-preview-32bit").exists()


def test_a_64_bit_build_left_in_the_work_folder_is_built_afresh(tree, tmp_path,
                                                                 monkeypatch):
    # what the builder left before it passed -m32: objects make would take as up to date
    left = os.path.join(upybuild.WORK, "micropython-1.29.0-preview-32bit", "build")
    fake_interpreter(os.path.join(left, "micropython"), 64)
    with open(os.path.join(left, "stale.o"), "w") as f:
        f.write("64-bit\n")
    monkeypatch.setattr(upybuild, "_run", recent_make([]))
    path = upybuild.build(str(tree), 32, out=str(tmp_path / "out"))
    assert upybuild.upy.is_32bit(path)
    assert not os.path.exists(os.path.join(left, "stale.o"))


def _manifest(cmd):
    given = [a for a in cmd if a.startswith("FROZEN_MANIFEST=")]
    if not given:
        return None
    with open(given[0][len("FROZEN_MANIFEST="):]) as f:
        return f.read()


def test_a_release_without_vfsrom_gets_umqtt_frozen_in(tree, tmp_path, monkeypatch):
    # a 1.24 tree: no ROMFS image can hold umqtt outside the ESP32 twin's heap, so the port
    # has it frozen in, as a stock ESP32 build has; a 1.25 or later tree gets nothing
    upylib = tmp_path / "upylib"
    (upylib / "umqtt").mkdir(parents=True)
    (upylib / "umqtt" / "simple.py").write_text("")
    monkeypatch.setattr(upybuild.upy, "UPYLIB", str(upylib))
    (tree / "lib" / "micropython-lib" / "micropython").mkdir(parents=True)
    (tmp_path / "w1").mkdir()
    (tmp_path / "w2").mkdir()
    assert _manifest(upybuild.port_command(str(tree), 32, 2, str(tmp_path / "w1"))) is None
    os.remove(str(tree / "extmod" / "vfs_rom.c"))
    manifest = _manifest(upybuild.port_command(str(tree), 32, 2, str(tmp_path / "w2")))
    assert 'package("umqtt", base_path="%s")' % upylib in manifest
    # the port's own frozen modules stay (its standard variant's manifest)
    assert os.path.join("variants", "standard", "manifest.py") in manifest


GC_C = ("static bool gc_try_add_heap(size_t failed_alloc) {\n"
        "    size_t to_alloc = MIN(avail, MAX(total_heap, needed));\n}\n")


def test_the_esp32_heap_build_patches_a_copy_of_gc_and_builds_the_regions_module(
        tree, tmp_path, monkeypatch):
    """--esp32-heap: the heap grows as the ESP32's (docs/esp32.md, "The heap"): the tree's
    own py/gc.c is left as it is; a copy's aims a new area at the ESP32's heap so far; the
    build includes the regions' module and header, still for 32 bits."""
    (tree / "py" / "gc.c").write_text(GC_C)
    made = []
    monkeypatch.setattr(upybuild, "_run", recent_make(made))
    path = upybuild.build(str(tree), 32, out=str(tmp_path / "out"), esp32_heap=True)
    assert os.path.basename(path) == "micropython-1.29.0-preview-32bit-esp32heap"
    assert upybuild.upy.is_32bit(path)
    assert (tree / "py" / "gc.c").read_text() == GC_C
    port = made[-1]
    copy = port[2][:-len(os.path.join("ports", "unix"))]
    assert copy != str(tree) + os.sep
    with open(os.path.join(copy, "py", "gc.c")) as f:
        assert "MAX(idfheap_doubling(total_heap), needed)" in f.read()
    cflags = [a for a in port if a.startswith("CFLAGS_EXTRA=")]
    assert len(cflags) == 1 and "-include " + os.path.join(upybuild.IDFHEAP, "idfheap.h") \
        in cflags[0]
    assert "USER_C_MODULES=" + os.path.dirname(upybuild.IDFHEAP) in port
    assert os.path.isfile(os.path.join(upybuild.IDFHEAP, "micropython.mk"))


def test_the_esp32_heap_build_refuses_a_tree_whose_heap_does_not_grow(tree, tmp_path,
                                                                     monkeypatch):
    (tree / "py" / "gc.c").write_text("void gc_init(void *start, void *end) {}\n")  # 1.20's
    monkeypatch.setattr(upybuild, "_run", recent_make([]))
    with pytest.raises(upybuild.BuildError, match="1.22 or later"):
        upybuild.build(str(tree), 32, out=str(tmp_path / "out"), esp32_heap=True)
    assert not os.path.exists(tmp_path / "out")
