"""TM1637 driver scenarios on fake pins, with and without the chip emulator.

tests/test_tm1637.py calls `scenarios` on CPython and on the MicroPython unix port and
decodes the wire logs itself.
"""

from boardlib.tm1637 import TM1637
from device.broken_drivers import MsbFirst, NoAckClock
from tools.simboard.chips import TM1637Emulator
from tools.simboard.pins import FakePin, Wire


def rig(cls=TM1637, chip=True):
    wire = Wire()
    clk = FakePin("clk", 1, wire, FakePin.OPEN_DRAIN)
    dio = FakePin("dio", 1, wire, FakePin.OPEN_DRAIN)
    emu = TM1637Emulator(clk, dio) if chip else None
    tm = cls(clk, dio)
    wire.clear()
    return tm, emu, wire


def state(tm, emu, wire, returned=None):
    out = {"log": wire.log, "returned": returned, "missing_acks": tm.missing_acks}
    if emu is not None:
        out.update(segments=bytes(emu.segments), visible=emu.visible(), errors=emu.errors,
                   brightness=emu.brightness, on=emu.on)
    return out


def scenarios():
    out = {}
    tm, emu, wire = rig()
    out["write"] = state(tm, emu, wire, tm.write(b"\x3f\x06\x5b\x4f"))
    tm, emu, wire = rig()
    out["write_pos"] = state(tm, emu, wire, tm.write(b"\x79\x50", 2))
    tm, emu, wire = rig()
    tm.write(b"\x3f\x3f\x3f\x3f")
    wire.clear()
    out["brightness"] = state(tm, emu, wire, tm.brightness(3))
    wire.clear()
    out["off"] = state(tm, emu, wire, tm.off())
    wire.clear()
    out["on"] = state(tm, emu, wire, tm.on())
    errors = []
    for bad in (8, -1, "3", None):
        tm, emu, wire = rig()
        try:
            if bad is None:
                tm.write(b"\x00" * 5, 2)
            else:
                tm.brightness(bad)
            errors.append(None)
        except ValueError:
            errors.append(wire.log)
    out["bad"] = errors
    tm, emu, wire = rig(chip=False)
    out["no_chip"] = state(tm, emu, wire, tm.write(b"\x3f\x06\x5b\x4f"))
    tm, emu, wire = rig(MsbFirst)
    out["msb_first"] = state(tm, emu, wire, tm.write(b"\x3f\x06\x5b\x4f"))
    tm, emu, wire = rig(NoAckClock)
    out["no_ack"] = state(tm, emu, wire, tm.write(b"\x3f\x06\x5b\x4f"))
    # Fixed-address mode and an unknown command, through the driver's own framing.
    tm, emu, wire = rig()
    tm._command(0x44)
    tm._start()
    tm._write_byte(0xC1)
    tm._write_byte(0x06)
    tm._write_byte(0x5B)
    tm._stop()
    tm._command(0x88)
    out["fixed"] = state(tm, emu, wire)
    tm, emu, wire = rig()
    tm._command(0x00)
    out["unknown"] = state(tm, emu, wire)
    # Pins handed over unconfigured (inputs, as machine.Pin(n) can be): made open drain.
    wire = Wire()
    clk = FakePin("clk", 1, wire, FakePin.IN)
    dio = FakePin("dio", 1, wire, FakePin.IN)
    emu = TM1637Emulator(clk, dio)
    tm = TM1637(clk, dio)
    out["input_pins"] = state(tm, emu, wire, tm.write(b"\x3f\x06\x5b\x4f"))
    return out
