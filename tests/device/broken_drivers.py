"""Deliberately broken display drivers: the display tests check that the emulators catch
them, so that a test that passes with the real driver could have failed.

Plain device code, imported by the device modules on CPython and on the unix port.
"""

from boardlib.max7219 import MAX7219
from boardlib.tm1637 import TM1637
from tools.sim.board.softi2c import SoftI2C


class MsbFirst(TM1637):
    """Bytes sent as they are: MSB first, the bus's order, not the chip's."""

    def write(self, segs, pos=0):
        acked = self._send(bytes([0x40]))
        acked = self._send(bytes([0xC0 | pos]) + bytes(segs)) and acked
        return self._send(bytes([0x88 | self._brightness])) and acked


class NoAckClock(SoftI2C):
    """A bus that gives no 9th clock for the acknowledge."""

    def _write_byte(self, val):
        self._write_bits(val)
        return 0


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
