"""Deliberately broken TM1637 drivers: the display tests check that the emulator catches
them, so that a test that passes with the real driver could have failed.

Runs on CPython and on the unix port (the device-side test scripts add tests/ to the path).
"""

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
