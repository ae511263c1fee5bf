"""MAX7219 8-digit LED driver over SPI (MOSI -> DIN, SCK -> CLK) and a LOAD/CS pin.

    from machine import Pin, SPI
    from boardlib.max7219 import MAX7219
    spi = SPI(2, baudrate=1_000_000, polarity=0, phase=0)
    chip = MAX7219(spi, Pin(5, Pin.OUT, value=1))
    chip.write(buf8)        # 8 segment bytes in font order, left to right
    chip.brightness(8)      # 0 (dim) .. 15 (bright)
    chip.off(); chip.on()

Every register write is one 16-bit frame, MSB first: the register address byte, then the
data byte; the chip latches the last 16 bits on the rising edge of LOAD (CS). Start-up
sets display-test 0, scan-limit digits-1, decode-mode 0 (raw segments), the intensity,
then shutdown 1 (normal operation).

The common 8-digit modules wire digit 0 (register 0x01) to the rightmost position, so
cell i of the buffer (0 = leftmost) goes to register `digits - i`. Raw segment order in
the chip is dp = bit 7, a = bit 6 ... g = bit 0; the font's order (a = bit 0 ... g =
bit 6, dp = bit 7) is converted through a 128-entry table built once.
"""

try:
    from micropython import const
except ImportError:  # CPython: the integer itself
    const = int


_REG_DECODE = const(0x09)
_REG_INTENSITY = const(0x0A)
_REG_SCAN_LIMIT = const(0x0B)
_REG_SHUTDOWN = const(0x0C)
_REG_TEST = const(0x0F)


def _font_to_raw_table():
    table = bytearray(128)
    for shape in range(128):
        raw = 0
        for bit in range(7):  # font bit 0 (a) -> chip bit 6, ..., font bit 6 (g) -> bit 0
            if shape & (1 << bit):
                raw |= 1 << (6 - bit)
        table[shape] = raw
    return table


_TO_RAW = _font_to_raw_table()
del _font_to_raw_table  # (its code is needed no more)


class MAX7219:
    def __init__(self, spi, cs, digits=8, brightness=7):
        if not isinstance(digits, int) or digits < 1 or digits > 8:
            raise ValueError("MAX7219 drives 1-8 digits, not %r" % (digits,))
        _check_level(brightness)
        self.spi = spi
        self.cs = cs
        self.digits = digits
        self._frame = bytearray(2)
        cs.value(1)
        self._register(_REG_TEST, 0)
        self._register(_REG_SCAN_LIMIT, digits - 1)
        self._register(_REG_DECODE, 0)
        self._register(_REG_INTENSITY, brightness)
        self._brightness = brightness
        self._register(_REG_SHUTDOWN, 1)
        # What each digit's register holds, as last written (raw, cell order), and whether
        # that is known: not before the first write, after forget(), nor after a write
        # that a bus error cut short.
        self._sent = bytearray(8)
        self._whole = True

    def write(self, segs):
        """Show segment bytes (font order), left to right; at most `digits` of them. Only
        the digits whose byte changed since the last write are sent (a register keeps its
        byte), unless the chip's digits are unknown (`forget`)."""
        count = len(segs)
        if count > self.digits:
            raise ValueError("%d cells for a %d-digit module" % (count, self.digits))
        whole = self._whole
        self._whole = True  # until the write is through (a bus error may cut it short)
        i = 0
        while i < count:  # (not a for loop: its iterator takes four words of the frame)
            byte = segs[i]
            byte = _TO_RAW[byte & 0x7F] | (byte & 0x80)
            if whole or byte != self._sent[i]:
                self._register(self.digits - i, byte)
                self._sent[i] = byte
            i += 1
        self._whole = count < self.digits  # the digits after these: not known

    def forget(self):
        """The digits' registers are not known (the module lost power, say): the next
        write sends them all."""
        self._whole = True

    def brightness(self, level=None):
        """Set the intensity 0-15; with no argument return it."""
        if level is None:
            return self._brightness
        _check_level(level)
        self._brightness = level
        self._register(_REG_INTENSITY, level)

    def on(self):
        self._register(_REG_SHUTDOWN, 1)

    def off(self):
        self._register(_REG_SHUTDOWN, 0)

    def _register(self, address, data):
        frame = self._frame
        frame[0] = address
        frame[1] = data
        self.cs.value(0)
        self.spi.write(frame)
        self.cs.value(1)


def _check_level(level):
    if not isinstance(level, int) or level < 0 or level > 15:
        raise ValueError("MAX7219 intensity must be 0-15, not %r" % (level,))
