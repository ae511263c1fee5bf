"""machine.SoftI2C's bus master over fake pins, edge for edge as MicroPython's C code.

    from tools.sim.board.pins import FakePin, Wire
    from tools.sim.board.softi2c import SoftI2C
    wire = Wire(line_nf=10)
    bus = SoftI2C(FakePin("clk", 1, wire), FakePin("dio", 1, wire), freq=6250, timeout=1000)
    bus.start(); acks = bus.write(b"\\x02"); bus.stop()

Follows extmod/machine_i2c.c (the same from v1.20.0 to v1.29): `mp_hal_i2c_init` (the
half period is 500000 // freq us, at least 1; a stop at once), `mp_hal_i2c_start`,
`mp_hal_i2c_stop`, `mp_hal_i2c_write_byte` (MSB first, then the acknowledge clock, SDA
read while SCL is high) and `mp_hal_i2c_scl_release`, which after releasing SCL waits a
half period and then until SCL reads high, 1 us at a time, giving up with ETIMEDOUT after
`timeout` such steps. `write` stops at the first byte without an acknowledge and returns
how many were acknowledged; start, stop and write raise OSError(ETIMEDOUT) as the C
methods do. Delays are the wire's `delay_us` (exact, as mp_hal_delay_us_fast is).

The lines' capacitance is the wire's (pins.Wire, `line_nf`): a line the master released
reads high only once it has reached the ESP32's input-high level (`read_rise_us`); a line
a device holds low reads low.
"""

import errno

_ETIMEDOUT = getattr(errno, "ETIMEDOUT", 110)


class SoftI2C:
    def __init__(self, scl, sda, freq=400000, timeout=50000):
        self.scl = scl
        self.sda = sda
        self.wire = scl.wire
        self.us_delay = 500000 // freq or 1
        self.us_timeout = timeout
        self._released = {}  # pin name -> when the master last released it (wire clock)
        rise = self.wire.read_rise_us  # the 1 us steps a released line takes to read high
        self._rise_steps = int(rise) + (rise > int(rise))
        for pin in (scl, sda):  # mp_hal_pin_open_drain: the output level stays as it was
            pin.init(pin.OPEN_DRAIN)
        self._stop()  # ignore error

    # -- the C methods ----------------------------------------------------------------------

    def start(self):
        self._raise(self._start())

    def stop(self):
        self._raise(self._stop())

    def write(self, buf):
        acks = 0
        for i in range(len(buf)):  # (indexed: nothing is allocated, as in C)
            ret = self._write_byte(buf[i])
            if ret < 0:
                self._raise(ret)
            if ret:
                break  # nack received, stop sending
            acks += 1
        return acks

    # -- extmod/machine_i2c.c ---------------------------------------------------------------

    @staticmethod
    def _raise(ret):
        if ret:
            raise OSError(-ret)

    def _delay(self):
        self.wire.delay_us(self.us_delay)

    def _low(self, pin):
        pin.value(0)

    def _release(self, pin):
        rises = pin.value() == 0 or pin.name not in self._released
        pin.value(1)
        if rises:  # timed from after the change: never before a chip saw it start rising
            self._released[pin.name] = self.wire.clock_us()

    def _read(self, pin):
        """The level the ESP32 reads: high once a released line has risen that far."""
        if not pin.value():
            return 0
        since = self._released.get(pin.name)
        if since is not None and self.wire.clock_us() - since < self.wire.read_rise_us:
            return 0
        return 1

    def _scl_release(self):
        count = self.us_timeout
        self._release(self.scl)
        self._delay()
        wire = self.wire
        if wire._virtual:
            # Nothing else moves while the master waits in virtual time: the line is
            # held low for good (by a device) or reads high after its rise, so the 1 us
            # steps are counted at once, to the same microsecond.
            if self._read(self.scl) == 0:
                steps = count
                if self.scl.value():  # whole steps until it reads high (integers only:
                    # the board's allocation tests lock the heap, and a float is an object)
                    steps = self._rise_steps - (wire.clock_us() - self._released[self.scl.name])
                    if steps > count:
                        steps = count
                wire.us += steps
                count -= steps
        else:
            while self._read(self.scl) == 0 and count:
                wire.delay_us(1)
                count -= 1
        if count == 0:
            return -_ETIMEDOUT
        return 0

    def _start(self):
        self._release(self.sda)
        self._delay()
        ret = self._scl_release()
        if ret:
            return ret
        self._low(self.sda)
        self._delay()
        return 0

    def _stop(self):
        self._delay()
        self._low(self.sda)
        self._delay()
        ret = self._scl_release()
        self._release(self.sda)
        self._delay()
        return ret

    def _write_byte(self, val):
        ret = self._write_bits(val)
        if ret:
            return ret
        self._release(self.sda)
        self._delay()
        ret = self._scl_release()
        if ret:
            return ret
        ack = self._read(self.sda)
        self._delay()
        self._low(self.scl)
        return ack

    def _write_bits(self, val):
        """The byte's eight bits, most significant first (0, or the clock's timeout)."""
        self._delay()
        self._low(self.scl)
        for i in range(7, -1, -1):
            if (val >> i) & 1:
                self._release(self.sda)
            else:
                self._low(self.sda)
            self._delay()
            ret = self._scl_release()
            if ret:
                self._release(self.sda)
                return ret
            self._low(self.scl)
        return 0
