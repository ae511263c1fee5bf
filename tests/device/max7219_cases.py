"""MAX7219 driver scenarios on fake pins into the chip emulator.

tests/test_max7219.py calls `scenarios` on CPython and on the MicroPython unix port and
decodes the SPI wire logs itself.
"""

from boardlib.max7219 import MAX7219
from device.broken_drivers import NoConversion, WrongRegister
from tools.sim.board.chips import MAX7219Emulator
from tools.sim.board.pins import FakePin, Wire
from tools.sim.board.softspi import SoftSPI


def rig(cls=MAX7219, digits=8):
    wire = Wire()
    sck = FakePin("sck", 0, wire)
    mosi = FakePin("mosi", 0, wire)
    cs = FakePin("cs", 1, wire)
    emu = MAX7219Emulator(mosi, sck, cs)
    chip = cls(SoftSPI(sck, mosi), cs, digits)
    return chip, emu, wire


def state(emu, wire):
    out = {"log": wire.log, "visible": emu.visible(), "errors": emu.errors,
           "intensity": emu.intensity, "scan_limit": emu.scan_limit,
           "decode": emu.decode, "shutdown": emu.shutdown, "test": emu.test}
    wire.clear()
    return out


def scenarios(text_cells):
    text_cells = bytes(text_cells)  # from JSON: a list of numbers
    out = {}
    chip, emu, wire = rig()
    out["init"] = state(emu, wire)
    chip.write(text_cells)
    out["write"] = state(emu, wire)
    chip.brightness(12)
    out["brightness"] = state(emu, wire)
    chip.off()
    out["off"] = state(emu, wire)
    chip.on()
    out["on"] = state(emu, wire)
    chip._register(0x0F, 1)
    out["test_on"] = state(emu, wire)
    chip._register(0x0F, 0)
    chip._register(0x0B, 3)
    out["scan3"] = state(emu, wire)
    chip._register(0x0B, 7)
    chip._register(0x09, 0xFF)
    for reg, code in ((8, 1), (7, 2), (6, 0x0B), (5, 0x0C), (4, 0x0D), (3, 0x0E), (2, 0x0F),
                      (1, 0x80)):
        chip._register(reg, code)
    out["code_b"] = state(emu, wire)
    chip._register(0x0D, 1)
    out["no_register"] = state(emu, wire)
    chip.cs.value(0)
    chip.spi.write(b"\x0c")
    chip.cs.value(1)
    out["short_frame"] = state(emu, wire)
    bad = []
    for call in ("brightness16", "digits9", "nine_cells"):
        chip, emu, wire = rig()
        wire.clear()
        try:
            if call == "brightness16":
                chip.brightness(16)
            elif call == "digits9":
                rig(MAX7219, 9)
            else:
                chip.write(text_cells + b"\x00")
            bad.append(None)
        except ValueError:
            bad.append(wire.log)
    out["bad"] = bad
    for name, cls in (("wrong_register", WrongRegister), ("no_conversion", NoConversion)):
        chip, emu, wire = rig(cls)
        chip.write(text_cells)
        out[name] = state(emu, wire)
    chip, emu, wire = rig(MAX7219, 4)
    chip.write(text_cells[:4])
    out["four_digits"] = state(emu, wire)
    return out
