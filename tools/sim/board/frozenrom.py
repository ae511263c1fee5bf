"""Modules that a stock ESP32 build has frozen, from a ROMFS image (tools.bench).

    from tools.sim.board.frozenrom import mount_frozen
    mount_frozen("frozen.romfs")     # its modules now come first on sys.path

A stock build freezes micropython-lib's umqtt (ports/esp32/boards/manifest.py): its
bytecode stays in flash and only the objects it makes come out of the heap. A module
imported from MicroPython's VfsRom runs its bytecode where it lies too (py/persistentcode.c,
mp_reader_try_read_rom), so the heap it takes is close to a frozen module's (a little more:
its raw code records and names still come out of the heap). The image itself is read
into the heap once, before anything is counted.
"""

import os
import sys

ROM = "/frozen-rom"


def mount_frozen(path):
    import vfs

    with open(path, "rb") as f:
        data = f.read()
    vfs.mount(vfs.VfsRom(data), ROM)
    sys.path.insert(0, ROM)


def write_image(tree, path):
    """A ROMFS image at `path` of the folder `tree` (host side), its folders and files as
    they are (tools.bench: the staged umqtt's .mpy files)."""
    from mpremote.romfs import VfsRomWriter

    rom = VfsRomWriter()

    def add(folder):
        for name in sorted(os.listdir(folder)):
            full = os.path.join(folder, name)
            if os.path.isdir(full):
                rom.opendir(name)
                add(full)
                rom.closedir()
            else:
                with open(full, "rb") as f:
                    rom.mkfile(name, f.read())

    add(tree)
    with open(path, "wb") as f:
        f.write(rom.finalise())
    return path


def compiled_image(folder, path):
    """A ROMFS image at `path` of the Python modules under `folder` (the modules a stock
    build freezes: tools/sim/board/portfrozen.py), each compiled to bytecode as the port's
    build freezes it, so that they run where they lie, outside the heap (host side; the
    ESP32 twin when it plays the board's heap). Kept while the sources are unchanged."""
    import shutil
    import tempfile

    sources, key = _sources(folder)
    if _fresh(path, key):
        return path
    with tempfile.TemporaryDirectory(prefix="portrom-") as tree:
        _compile(folder, sources, tree)
        write_image(tree, path + ".tmp")
    shutil.move(path + ".tmp", path)
    _stamp(path, key)
    return path


def compiled_tree(folder, path):
    """The same modules compiled to `.mpy` files in the folder `path`, kept while the
    sources are unchanged: for a unix port that cannot mount a ROMFS image (VfsRom came
    with MicroPython 1.25), whose twin then loads their bytecode into the heap, which the
    board keeps in flash: harsher than the board by that much, never kinder."""
    import shutil

    sources, key = _sources(folder)
    if _fresh(path, key):
        return path
    shutil.rmtree(path, ignore_errors=True)
    _compile(folder, sources, path + ".tmp")
    shutil.move(path + ".tmp", path)
    _stamp(path, key)
    return path


def _sources(folder):
    """The `.py` files under `folder`, and a key of their names and contents."""
    import hashlib

    sources = []
    for top, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        sources += [os.path.join(top, n) for n in sorted(files) if n.endswith(".py")]
    key = hashlib.sha256()
    for src in sources:
        with open(src, "rb") as f:
            key.update(os.path.relpath(src, folder).encode() + f.read())
    return sources, key.hexdigest()


def _compile(folder, sources, tree):
    from tools.port import mpycross

    for src in sources:
        rel = os.path.relpath(src, folder)[:-3] + ".mpy"
        os.makedirs(os.path.join(tree, os.path.dirname(rel)), exist_ok=True)
        mpycross.compile_file(src, os.path.join(tree, rel), mpycross.ESP32_FLAGS)


def _fresh(path, key):
    try:
        with open(path + ".key") as f:
            return f.read() == key and os.path.exists(path)
    except OSError:
        return False


def _stamp(path, key):
    with open(path + ".key", "w") as f:
        f.write(key)
