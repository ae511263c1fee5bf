"""Deliberately broken display drivers: the display tests check that the emulators catch
them, so that a test that passes with the real driver could have failed.

Plain device code, imported by the device modules on CPython and on the unix port.
"""

from boardlib.max7219 import MAX7219
from boardlib.tm1637 import TM1637


class MsbFirst(TM1637):
    """Bits in the wrong order."""

    def _write_byte(self, byte):
        for bit in range(7, -1, -1):
            self.dio.value((byte >> bit) & 1)
            self.clk.value(1)
            self.clk.value(0)
        return self._ack()


class NoAckClock(TM1637):
    """No 9th clock for the acknowledge."""

    def _write_byte(self, byte):
        for _ in range(8):
            self.dio.value(byte & 1)
            byte >>= 1
            self.clk.value(1)
            self.clk.value(0)
        return True


class WrongRegister(MAX7219):
    """A MAX7219 driver with the digit registers counted from 0 instead of 1."""

    def _register(self, address, data):
        if 1 <= address <= 8:
            address -= 1
        MAX7219._register(self, address, data)


class NoConversion(MAX7219):
    """A MAX7219 driver that sends the font's bit order as it is."""

    def write(self, segs):
        for i in range(len(segs)):
            self._register(self.digits - i, segs[i])
