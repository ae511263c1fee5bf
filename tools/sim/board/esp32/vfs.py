"""The twin's flash filesystem: littlefs, loading only the .mpy files the board could.

py/persistentcode.c refuses a .mpy ("incompatible .mpy file") whose version is not the
board's, or that holds native code (viper, @native) for another architecture or another
native sub-version. The twin plays a chip whose MicroPython version is `version`, so an
.mpy built for another one fails here as it would on the board. Native code for the
ESP32 cannot run on the twin's own processor at all: the twin says so plainly.
(The check is made on every open of a .mpy for reading, not only by import: reading an
incompatible .mpy as a file fails on the twin where a board would allow it.)

`overlay(prefix, vfs)` puts a read-only folder of the host under a path of this filesystem
(rom.py: the frozen modules at /.frozen and /.port) without a mount of its own: the ESP32's
`.frozen` is no mount either, so `os.listdir('/')` does not show it. Frozen modules are
not checked: they are built for the chip (the twin's own machine code, frozen.py).
"""

from tools.sim.board.esp32.espsys import mpy_of


class TwinVfs:
    version = (1, 24, 1, "")

    def __init__(self, vfs):
        self.vfs = vfs
        self.overlays = []

    def overlay(self, prefix, vfs):
        self.overlays.append((prefix, vfs))

    def _where(self, path):
        for prefix, vfs in self.overlays:
            if path == prefix or path.startswith(prefix + "/"):
                return vfs, path[len(prefix):] or "/"
        return self.vfs, path

    def open(self, path, mode="r"):
        vfs, path = self._where(path)
        if vfs is not self.vfs and ("w" in mode or "a" in mode or "+" in mode):
            raise OSError(30)  # EROFS: frozen modules are in the firmware image
        f = vfs.open(path, mode)
        if vfs is self.vfs and path.endswith(".mpy") and "r" in mode:
            self._check(f)
        return f

    def _check(self, f):
        header = f.read(4)
        f.seek(0)
        board = mpy_of(self.version)
        if len(header) < 4 or header[0] != ord("M") or header[1] != board & 0xFF:
            raise ValueError("incompatible .mpy file")
        arch = header[2] >> 2
        if arch:
            if arch != board >> 10 or header[2] & 3 != (board >> 8) & 3:
                raise ValueError("incompatible .mpy file")
            raise ValueError("twin: cannot run xtensawin machine code; ship this module as .py")

    def mount(self, readonly, mkfs):
        return self.vfs.mount(readonly, mkfs)

    def umount(self):
        return self.vfs.umount()

    def ilistdir(self, path):
        vfs, path = self._where(path)
        return vfs.ilistdir(path)

    def stat(self, path):
        vfs, path = self._where(path)
        return vfs.stat(path)

    def statvfs(self, path):
        return self.vfs.statvfs(path)

    def chdir(self, path):
        return self.vfs.chdir(path)

    def getcwd(self):
        return self.vfs.getcwd()

    def mkdir(self, path):
        return self.vfs.mkdir(path)

    def rmdir(self, path):
        return self.vfs.rmdir(path)

    def remove(self, path):
        return self.vfs.remove(path)

    def rename(self, old, new):
        return self.vfs.rename(old, new)
