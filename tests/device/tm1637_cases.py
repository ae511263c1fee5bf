"""TM1637 driver scenarios on fake pins, with and without the chip emulator.

tests/test_tm1637.py calls `scenarios` on CPython and on the MicroPython unix port and
decodes the wire logs itself. The driver's bus is the simulator's stand-in for
machine.SoftI2C (tools/sim/board/softi2c.py), as the board's is the C one.
"""

from boardlib.tm1637 import FREQ_HZ, TIMEOUT_US, TM1637, reverse
from device.broken_drivers import MsbFirst, NoAckClock
from tools.sim.board.chips import TM1637Emulator
from tools.sim.board.pins import FakePin, Wire
from tools.sim.board.softi2c import SoftI2C


def rig(cls=TM1637, chip=True, bus=SoftI2C, mode=FakePin.OPEN_DRAIN):
    wire = Wire()
    clk = FakePin("clk", 1, wire, mode)
    dio = FakePin("dio", 1, wire, mode)
    emu = TM1637Emulator(clk, dio) if chip else None
    tm = cls(bus(clk, dio, freq=FREQ_HZ, timeout=TIMEOUT_US))
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
    tm, emu, wire = rig(bus=NoAckClock)
    out["no_ack"] = state(tm, emu, wire, tm.write(b"\x3f\x06\x5b\x4f"))
    # Fixed-address mode and an unknown command, through the driver's own framing.
    tm, emu, wire = rig()
    tm._send(bytes([reverse(0x44)]))
    tm._send(bytes([reverse(0xC1), reverse(0x06), reverse(0x5B)]))
    tm._send(bytes([reverse(0x88)]))
    out["fixed"] = state(tm, emu, wire)
    tm, emu, wire = rig()
    tm._send(bytes([reverse(0x00)]))
    out["unknown"] = state(tm, emu, wire)
    # Pins handed over unconfigured (inputs, as machine.Pin(n) can be): the bus makes them
    # open drain (mp_hal_pin_open_drain).
    tm, emu, wire = rig(mode=FakePin.IN)
    out["input_pins"] = state(tm, emu, wire, tm.write(b"\x3f\x06\x5b\x4f"))
    # A CLK line held low (a short, or a module whose line never rises): the bus times
    # out; the driver counts the bytes as missing and does not raise.
    wire = Wire()
    clk = FakePin("clk", 1, wire, FakePin.OPEN_DRAIN)
    tm = TM1637(SoftI2C(clk, FakePin("dio", 1, wire, FakePin.OPEN_DRAIN), freq=FREQ_HZ,
                        timeout=TIMEOUT_US))
    wire.clear()
    clk.external(0)
    out["stuck_clk"] = state(tm, None, wire, tm.write(b"\x3f\x06\x5b\x4f"))
    out["stuck_clk"]["us"] = wire.us
    return out
