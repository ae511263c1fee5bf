"""TM1637 4-digit LED driver on its two-wire bus (CLK, DIO), clocked by machine.SoftI2C.

    from machine import Pin, SoftI2C
    from boardlib.tm1637 import TM1637, FREQ_HZ, TIMEOUT_US
    bus = SoftI2C(scl=Pin(16), sda=Pin(17), freq=FREQ_HZ, timeout=TIMEOUT_US)
    left = TM1637(bus)
    left.write(b"\\x3f\\x06\\x5b\\x4f")   # "0123", segment bytes in font order
    left.brightness(3)                  # 0 (dim) .. 7 (bright)
    left.off(); left.on()

The bus is injected: anything with machine.SoftI2C's `start()`, `stop()` and `write(buf)`
(which returns how many bytes were acknowledged). The simulator's is
tools/sim/board/softi2c.py, on its fake pins.

The TM1637's two-wire protocol (TM1637 datasheet) is I2C's framing without addresses:
- start: DIO falls while CLK is high; stop: DIO rises while CLK is high;
- after each byte the chip pulls DIO low until the falling edge of a 9th clock, the
  acknowledge, read while CLK is high;
- but a byte goes LSB first, where I2C sends the MSB first: every byte is bit-reversed
  before the bus sends it.
SoftI2C does all of this in C (extmod/machine_i2c.c, v1.20.0 to v1.29): the board spends a
few calls on a display write instead of a Python call per edge. It drives both lines open
drain (the chip can pull DIO low) and, after releasing CLK, waits until the line reads
high (its clock stretching), so the modules' slow RC rise on CLK (10 kOhm, up to 10 nF)
costs time, not correctness. DIO has no such wait: docs/esp32.md works out the half
period FREQ_HZ gives (80 us) against the worst rise, and TIMEOUT_US against a CLK line
that never rises.

A write is three frames: data command 0x40 (write, auto-increment), address command
0xC0 + first grid followed by the segment bytes, display control 0x88 | brightness
(0x80 | brightness when off). `missing_acks` counts bytes no chip acknowledged (a loose
wire or no module; the C bus stops a frame at its first missing acknowledge, so the rest
of that frame counts as missing too): the driver never raises for that, nor for a bus
that times out, and `write` returns False instead. Nothing is allocated per write of
four grids (what the board writes).
"""

try:
    from micropython import const
except ImportError:  # CPython: the value itself
    const = lambda value: value


# Half a clock period of 500000 // FREQ_HZ = 80 us; a CLK line that stays low longer than
# TIMEOUT_US after its release is an error (OSError ETIMEDOUT from the bus).
FREQ_HZ = const(6250)
TIMEOUT_US = const(1000)

_CMD_DATA_AUTO = const(0x40)
_CMD_ADDRESS = const(0xC0)
_CMD_CONTROL = const(0x80)
_DISPLAY_ON = const(0x08)
_GRIDS = const(6)
_FRAME = const(5)  # the address command and four grids: what a module of the board gets
# A nibble bit-reversed: a byte reversed is _REV[b & 15] << 4 | _REV[b >> 4].
_REV = b"\x00\x08\x04\x0c\x02\x0a\x06\x0e\x01\x09\x05\x0d\x03\x0b\x07\x0f"
_DATA_FRAME = const(b"\x02")  # the data command 0x40, reversed
_ADDRESS_0 = const(0x03)  # the address command 0xC0 (grid 0), reversed


def reverse(byte):
    """The byte as the TM1637 reads it from an MSB-first bus: its bits in reverse order."""
    return _REV[byte & 15] << 4 | _REV[byte >> 4]


class TM1637:
    def __init__(self, bus, brightness=7):
        _check_level(brightness)
        # The bus's methods, taken once (a bound method is made at every lookup).
        self._start = bus.start
        self._stop = bus.stop
        self._write = bus.write
        self._brightness = brightness
        self._on = True
        self.missing_acks = 0
        self._acks = 0  # while a write runs: the bytes acknowledged so far
        self._frame = bytearray(1 + _GRIDS)
        self._four = memoryview(self._frame)[:_FRAME]
        # The display control byte every write ends with, made when the brightness or
        # on/off changes rather than at every write.
        self._control_frame = bytearray(1)
        # Room in the attribute table (docs/performance.md, "Attribute tables with room"):
        # a full one is searched whole for every name it lacks, each method's.
        self._room = None
        self._set_control()

    def write(self, segs, pos=0):
        """Write segment bytes to grids pos.. (up to 6 on the chip, 4 on the modules).

        Returns True when the chip acknowledged every byte. Raises ValueError for grids
        outside the chip, writing nothing.
        """
        if pos == 0 and len(segs) == 4:  # a module of the board: unrolled, in this call
            frame = self._frame
            rev = _REV
            frame[0] = _ADDRESS_0
            pos = segs[0]  # (the argument's slot again: each byte in turn)
            frame[1] = rev[pos & 15] << 4 | rev[pos >> 4]
            pos = segs[1]
            frame[2] = rev[pos & 15] << 4 | rev[pos >> 4]
            pos = segs[2]
            frame[3] = rev[pos & 15] << 4 | rev[pos >> 4]
            pos = segs[3]
            frame[4] = rev[pos & 15] << 4 | rev[pos >> 4]
            return self._send3(self._four)
        count = len(segs)
        if pos < 0 or pos + count > _GRIDS:
            raise ValueError("grids %d..%d outside 0..%d" % (pos, pos + count - 1, _GRIDS - 1))
        return self._write_at(segs, pos)

    def _write_at(self, segs, pos):
        frame = self._frame
        frame[0] = reverse(_CMD_ADDRESS | pos)
        for i in range(len(segs)):
            frame[i + 1] = reverse(segs[i])
        return self._send3(memoryview(frame)[: len(segs) + 1])

    def brightness(self, level=None):
        """Set the brightness 0-7 (and send it); with no argument return it."""
        if level is None:
            return self._brightness
        _check_level(level)
        self._brightness = level
        return self._control()

    def on(self):
        self._on = True
        return self._control()

    def off(self):
        self._on = False
        return self._control()

    def _control(self):
        self._set_control()
        return self._send(self._control_frame)

    def _set_control(self):
        self._control_frame[0] = reverse(
            _CMD_CONTROL | (_DISPLAY_ON if self._on else 0) | self._brightness
        )

    # The bus calls are in functions whose frames fit on the C stack (a try block takes
    # three of its 11 words): the acknowledges are counted in `_acks`, not in a local.

    def _send(self, frame):
        """One frame: start, the bytes, stop. True if the chip acknowledged them all."""
        self._acks = 0
        try:
            self._start()
            self._acks = self._write(frame)
            self._stop()
        except OSError:  # the bus timed out: CLK held low (no module, a short)
            pass
        frame = len(frame)  # (the slot again: the bytes sent)
        if self._acks == frame:
            return True
        self.missing_acks += frame - self._acks
        return False

    def _send3(self, frame):
        """A write's three frames: the data command, `frame` (the address and the
        grids), display control: as three _send calls, in one."""
        self._acks = 0
        try:
            self._start()
            self._acks = self._write(_DATA_FRAME)
            self._stop()
            self._start()
            self._acks += self._write(frame)
            self._stop()
            self._start()
            self._acks += self._write(self._control_frame)
            self._stop()
        except OSError:  # the bus timed out: CLK held low (no module, a short)
            pass
        frame = len(frame) + 2  # (the slot again: the bytes sent)
        if self._acks == frame:
            return True
        self.missing_acks += frame - self._acks
        return False


def _check_level(level):
    if not isinstance(level, int) or level < 0 or level > 7:
        raise ValueError("TM1637 brightness must be 0-7, not %r" % (level,))
