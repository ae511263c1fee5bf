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

import sys

ROM = "/frozen-rom"


def mount_frozen(path):
    import vfs

    with open(path, "rb") as f:
        data = f.read()
    vfs.mount(vfs.VfsRom(data), ROM)
    sys.path.insert(0, ROM)
