"""Simulated flash for the simulated board: block devices for littlefs on the unix port.

    from tools.sim.board.flash import FileBlockDev, RamBlockDev, mount
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

Flash timing: a real SPI flash chip takes tens of milliseconds to erase a 4 KB sector and
a fraction of one to program a page, and an ESP32 runs nothing of MicroPython meanwhile
(docs/esp32.md, "Flash timing"). `timing` plays that: a (sector erase, page program) pair
of microseconds, TYPICAL or MAXIMUM below (`TIMINGS` by name), and every erase and every
program command adds its time to `busy_us`, the board time the flash has taken so far:

    bdev = RamBlockDev(timing=TYPICAL)                 # virtual time: the caller reads
    before = bdev.busy_us; ...; took_us = bdev.busy_us - before   # and moves its clock
    bdev = FileBlockDev(path, timing=TYPICAL, wait=time.sleep_us)  # real time: it waits
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

# Sector erase (4 KB) and page program, in microseconds, of the SPI NOR flash an ESP32-WROOM
# module carries: Winbond W25Q32JV datasheet, "AC Electrical Characteristics": tSE 45 ms
# typical, 400 ms maximum; tPP 0.4 ms typical, 3 ms maximum. GigaDevice's GD25Q32/GD25Q64
# are of the same order; ESP-IDF waits up to 600 ms for one sector erase before it calls
# the chip broken (components/spi_flash/spi_flash_chip_generic.c,
# SPI_FLASH_GENERIC_SECTOR_ERASE_TIMEOUT_MS). The maximum is what a worn or hot chip takes.
TYPICAL = (45000, 400)
MAXIMUM = (400000, 3000)
TIMINGS = {"typical": TYPICAL, "max": MAXIMUM, "none": None}
# ESP-IDF programs at most 64 bytes with one command, and never across a 256-byte page
# (components/hal/include/hal/spi_flash_hal.h: SPI_FLASH_HAL_MAX_WRITE_BYTES; the chip
# driver's write_data_slicer); each command is charged the chip's whole page program time.
_PAGE = 256
_COMMAND_BYTES = 64


def program_commands(addr, length):
    """How many page program commands ESP-IDF sends to write `length` bytes at `addr`."""
    count = 0
    while length > 0:
        room = min(_COMMAND_BYTES, _PAGE - addr % _PAGE)
        step = min(room, length)
        addr += step
        length -= step
        count += 1
    return count


class _FaultyFlash:
    """Counting, power cuts and the operation log; subclasses store the bytes."""

    def _init_counters(self, block_size, blocks, cut_after_writes, torn, record,
                       timing=None, wait=None):
        self.timing = timing  # (erase us, program us) or None: the flash takes no time
        self.wait = wait  # called with the microseconds each operation takes (real time)
        self.busy_us = 0  # board time the erases and programs took, altogether
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
        addr = block * self.block_size + offset
        self._write(addr, landing)
        if self.timing is not None:
            self._busy(self.timing[1] * program_commands(addr, len(landing)))
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
        if self.timing is not None:
            self._busy(self.timing[0])
        self.erases += 1
        if self.log is not None:
            self.log.append((block, -1, None))
        return 0

    def _busy(self, us):
        self.busy_us += us
        if self.wait is not None:
            self.wait(us)

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
                 torn=False, record=False, timing=None, wait=None):
        self._init_counters(block_size, blocks, cut_after_writes, torn, record, timing, wait)
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
                 record=False, timing=None, wait=None):
        self._init_counters(block_size, blocks, cut_after_writes, torn, record, timing, wait)
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


class Stall:
    """The board time a timed flash took, handed to a virtual clock in whole steps.

        stall = Stall(bdev, 5)
        tick(app, t)                 # the firmware erased and programmed meanwhile
        t += stall.take_ms() + 5     # the next poll comes after the flash is done

    What is left over (less than a step) is kept for the next call: no time is lost."""

    def __init__(self, bdev, step_ms):
        self.bdev = bdev
        self.step_us = step_ms * 1000
        self._seen = bdev.busy_us
        self._owed = 0

    def take_ms(self):
        busy = self.bdev.busy_us
        self._owed += busy - self._seen
        self._seen = busy
        steps = self._owed // self.step_us
        self._owed -= steps * self.step_us
        return steps * self.step_us // 1000


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
