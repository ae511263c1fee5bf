"""Bit-banged SPI writer over fake pins: mode 0, MSB first, write only.

    from tools.sim.board.pins import FakePin, Wire
    from tools.sim.board.softspi import SoftSPI
    wire = Wire()
    spi = SoftSPI(FakePin("sck", 0, wire), FakePin("mosi", 0, wire))
    spi.write(b"\\x0c\\x01")     # what machine.SPI.write does, as edges on the pins

Mode 0: the clock idles low, data is set while it is low and the device samples it on
the rising edge. This gives the MAX7219 emulator the same bit stream a real SPI
peripheral puts on the wires.
"""


class SoftSPI:
    def __init__(self, sck, mosi):
        self.sck = sck
        self.mosi = mosi
        sck.value(0)

    def write(self, buf):
        sck = self.sck
        mosi = self.mosi
        for i in range(len(buf)):
            byte = buf[i]
            for bit in range(7, -1, -1):
                mosi.value((byte >> bit) & 1)
                sck.value(1)
                sck.value(0)
