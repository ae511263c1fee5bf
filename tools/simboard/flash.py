"""Simulated flash for the simulated board: block devices for littlefs on the unix port.

    from tools.simboard.flash import FileBlockDev, RamBlockDev, mount
    bdev = FileBlockDev("state/flash.img")          # 384 blocks of 4 KB = 1.5 MB
    formatted = mount(bdev, "/flash")               # formats only a blank image
    ...                                             # the firmware uses /flash
    os.umount("/flash"); bdev.close()

Both devices implement the extended block interface that `os.VfsLfs2` needs:
`readblocks(block, buf, offset)`, `writeblocks(block, buf, offset)` (program) and
`ioctl(op, arg)` (4 block count, 5 block size, 6 erase, 3 sync). They count what wears the
flash (`writes`, `erases`, `bytes_written`) and can simulate a power cut:

    bdev = RamBlockDev(cut_after_writes=120, torn=True)

The 120th program operation is the last to reach the flash (with `torn`, only its first
half does, and it fails); every later program or erase fails and changes nothing, as if the
power had gone. A failure is reported the block-device way, as -EIO, which littlefs turns
into OSError(EIO) for the code that was writing. `record=True` keeps a log of every program and
erase, so a test can rebuild the flash as it was after any number of operations
(`replay_into`) without running the game again.
"""

import io
import os

_EIO = 5
_IOCTL_INIT = 1
_IOCTL_DEINIT = 2
_IOCTL_SYNC = 3
_IOCTL_BLOCK_COUNT = 4
_IOCTL_BLOCK_SIZE = 5
_IOCTL_ERASE = 6
_ERASED = 0xFF


class _FaultyFlash:
    """Counting, power cuts and the operation log; subclasses store the bytes."""

    def _init_counters(self, block_size, blocks, cut_after_writes, torn, record):
        self.block_size = block_size
        self.blocks = blocks
        self.writes = 0
        self.erases = 0
        self.bytes_written = 0
        self.cut_after_writes = cut_after_writes
        self.torn = torn
        self.cut = False
        # Each entry: (block, offset, bytes) for a program, (block, -1, None) for an erase.
        self.log = [] if record else None
        self._blank = b"\xff" * block_size

    def _check_range(self, block, offset, length):
        if block < 0 or offset < 0 or block * self.block_size + offset + length > self.size():
            raise OSError(_EIO)

    def size(self):
        return self.block_size * self.blocks

    def readblocks(self, block, buf, offset=0):
        self._check_range(block, offset, len(buf))
        self._read(block * self.block_size + offset, buf)

    def writeblocks(self, block, buf, offset=None):
        # Without an offset this is the basic interface: whole blocks, erase included.
        if offset is None:
            offset = 0
            for i in range(len(buf) // self.block_size):
                if self._erase(block + i):
                    return -_EIO
        self._check_range(block, offset, len(buf))
        if self.cut:
            return -_EIO
        landing = buf
        last = self.cut_after_writes is not None and self.writes + 1 >= self.cut_after_writes
        if last and self.torn:
            landing = bytes(buf)[: len(buf) // 2]
        self._write(block * self.block_size + offset, landing)
        self.writes += 1
        self.bytes_written += len(landing)
        if self.log is not None:
            self.log.append((block, offset, bytes(landing)))
        if last:
            self.cut = True
            if self.torn:
                return -_EIO
        return 0

    def _erase(self, block):
        if self.cut:
            return -_EIO
        self._check_range(block, 0, self.block_size)
        self._write(block * self.block_size, self._blank)
        self.erases += 1
        if self.log is not None:
            self.log.append((block, -1, None))
        return 0

    def ioctl(self, op, arg):
        if op == _IOCTL_BLOCK_COUNT:
            return self.blocks
        if op == _IOCTL_BLOCK_SIZE:
            return self.block_size
        if op == _IOCTL_ERASE:
            return self._erase(arg)
        if op == _IOCTL_SYNC:
            self._sync()
            return 0
        if op in (_IOCTL_INIT, _IOCTL_DEINIT):
            return 0
        return None

    def _read(self, addr, buf):
        self._stream.seek(addr)
        if self._stream.readinto(buf) != len(buf):
            raise OSError(_EIO)

    def _write(self, addr, data):
        self._stream.seek(addr)
        self._stream.write(data)

    def _sync(self):
        pass

    def is_blank(self):
        """True when nothing was ever stored: the first two blocks (the superblock) erased."""
        buf = bytearray(self.block_size)
        for block in (0, 1):
            self._read(block * self.block_size, buf)
            if buf != self._blank:
                return False
        return True

    def apply(self, entry, torn=False):
        """Repeat one logged operation on this device (with `torn`, half of a program)."""
        block, offset, data = entry
        if offset < 0:
            self._write(block * self.block_size, self._blank)
        else:
            self._write(block * self.block_size + offset, data[: len(data) // 2] if torn else data)


class RamBlockDev(_FaultyFlash):
    """Flash held in memory: fast, for tests. `image` starts it from given bytes."""

    def __init__(self, block_size=4096, blocks=384, image=None, cut_after_writes=None,
                 torn=False, record=False):
        self._init_counters(block_size, blocks, cut_after_writes, torn, record)
        if image is None:
            image = self._blank * blocks
        elif len(image) != block_size * blocks:
            raise ValueError("image is %d bytes, expected %d" % (len(image), self.size()))
        # A stream, not a bytearray: seek and readinto copy without allocating, so reads
        # also work where the heap is locked (littlefs closing a file from a finaliser).
        self._stream = io.BytesIO(image)

    @property
    def data(self):
        """A copy of the whole flash as bytes."""
        return self._stream.getvalue()


class FileBlockDev(_FaultyFlash):
    """Flash kept in an image file that outlives the process (the sim's --state DIR)."""

    def __init__(self, path, block_size=4096, blocks=384, cut_after_writes=None, torn=False,
                 record=False):
        self._init_counters(block_size, blocks, cut_after_writes, torn, record)
        self.path = path
        try:
            existing = os.stat(path)[6]
        except OSError:
            existing = -1
        if existing < 0:
            with open(path, "wb") as f:
                for _ in range(blocks):
                    f.write(self._blank)
        elif existing != self.size():
            raise ValueError("%s is %d bytes, expected %d (%d blocks of %d)"
                             % (path, existing, self.size(), blocks, block_size))
        self._stream = open(path, "r+b")

    def _sync(self):
        self._stream.flush()

    def close(self):
        if self._stream is not None:
            self._stream.flush()
            self._stream.close()
            self._stream = None


def mount(bdev, path="/flash", format_blank=True):
    """Mount littlefs from `bdev` at `path`; returns True when it formatted a blank device.

    A device that holds something littlefs cannot mount is not formatted (that would lose
    whatever is on it): OSError is raised and the caller decides.
    """
    try:
        os.mount(os.VfsLfs2(bdev), path)
        return False
    except OSError:
        if not (format_blank and bdev.is_blank()):
            raise
    os.VfsLfs2.mkfs(bdev)
    os.mount(os.VfsLfs2(bdev), path)
    return True
