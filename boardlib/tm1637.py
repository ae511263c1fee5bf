"""TM1637 4-digit LED driver over two bit-banged pins (CLK, DIO).

    from machine import Pin
    from boardlib.tm1637 import TM1637
    left = TM1637(Pin(16, Pin.OPEN_DRAIN, value=1), Pin(17, Pin.OPEN_DRAIN, value=1))
    left.write(b"\\x3f\\x06\\x5b\\x4f")   # "0123", segment bytes in font order
    left.brightness(3)                  # 0 (dim) .. 7 (bright)
    left.off(); left.on()

The pins are injected. The driver makes them open-drain outputs, released (when the pin
object offers Pin.OPEN_DRAIN: machine.Pin and the simulator's FakePin do), so that
value(1) releases the line and the module's pull-up resistors take it high, and the chip
can pull DIO low for its acknowledge. value(0) drives the line low.

The two-wire protocol (TM1637 datasheet):
- start: DIO falls while CLK is high; stop: DIO rises while CLK is high;
- a byte is 8 bits LSB first; DIO changes only while CLK is low and the chip samples it
  on the CLK rising edge;
- after the 8th bit the chip pulls DIO low until the falling edge of a 9th clock, the
  acknowledge: the driver releases DIO, gives that clock, and reads DIO while CLK is high.
Timing: the chip needs little (CLK pulses of 400 ns, data set-up and hold of 100 ns,
TM1637 datasheet), but the lines are open drain: a released line rises through the
module's 10 kOhm pull-up into its capacitor, 10 nF on many modules, and reaches the
chip's input-high level (0.7 VDD) only after RC ln(1/0.3) = 1.2 RC: 120 us, 152 us with
the parts' tolerances. So every edge that follows a release waits `_RISE_US` (180 us);
edges after a line is pulled low wait the 5 us half period. docs/esp32.md has the sums.
A write is three frames: data command 0x40 (write, auto-increment), address command
0xC0 + first grid followed by the segment bytes, display control 0x88 | brightness
(0x80 | brightness when off). `missing_acks` counts bytes no chip acknowledged (a loose
wire or no module): the driver never raises for that, `write` returns False instead.
"""

try:
    from micropython import const
except ImportError:  # CPython: the integer itself
    const = int


try:
    from time import sleep_us as _sleep_us
except ImportError:  # CPython: no microsecond sleep; the bus is simulated there

    def _sleep_us(us):
        pass


_CMD_DATA_AUTO = const(0x40)
_CMD_ADDRESS = const(0xC0)
_CMD_CONTROL = const(0x80)
_DISPLAY_ON = const(0x08)
_GRIDS = const(6)
# After pulling a line low (driven: fast), and after releasing one (its RC: slow).
_HALF_PERIOD_US = const(5)
_RISE_US = const(180)


class TM1637:
    def __init__(self, clk, dio, brightness=7, sleep_us=None):
        _check_level(brightness)
        self.clk = clk
        self.dio = dio
        # The lines' value methods, taken once: a display refresh calls them a few hundred
        # times, and each `pin.value` looked up again is a search of the pin type's table.
        self._clk = clk.value
        self._dio = dio.value
        self._sleep_us = sleep_us if sleep_us is not None else _sleep_us
        self._brightness = brightness
        self._on = True
        self.missing_acks = 0
        # Idle bus: both lines released high. A push-pull output would fight the chip's
        # acknowledge, so make them open drain where the pin type can.
        for pin in (clk, dio):
            open_drain = getattr(pin, "OPEN_DRAIN", None)
            if open_drain is not None:
                pin.init(open_drain, value=1)
            else:
                pin.value(1)

    def write(self, segs, pos=0):
        """Write segment bytes to grids pos.. (up to 6 on the chip, 4 on the modules).

        Returns True when the chip acknowledged every byte. Raises ValueError for grids
        outside the chip, writing nothing.
        """
        count = len(segs)
        if pos < 0 or pos + count > _GRIDS:
            raise ValueError("grids %d..%d outside 0..%d" % (pos, pos + count - 1, _GRIDS - 1))
        acked = self._command(_CMD_DATA_AUTO)
        self._start()
        acked = self._write_byte(_CMD_ADDRESS | pos) and acked
        for i in range(count):
            acked = self._write_byte(segs[i]) and acked
        self._stop()
        return self._control() and acked

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
        return self._command(
            _CMD_CONTROL | (_DISPLAY_ON if self._on else 0) | self._brightness
        )

    def _command(self, byte):
        self._start()
        acked = self._write_byte(byte)
        self._stop()
        return acked

    def _start(self):
        self._dio(1)
        self._clk(1)
        self._sleep_us(_RISE_US)  # both high, and a stop before this one seen
        self._dio(0)
        self._sleep_us(_HALF_PERIOD_US)
        self._clk(0)

    def _stop(self):
        self._clk(0)
        self._dio(0)
        self._sleep_us(_HALF_PERIOD_US)
        self._clk(1)
        self._sleep_us(_RISE_US)
        self._dio(1)
        self._sleep_us(_RISE_US)  # the stop is DIO seen rising while CLK is high

    def _write_byte(self, byte):
        """Clock one byte out LSB first, then the acknowledge clock; True if acked."""
        # The value methods and the delay in locals: this loop is most of a display
        # refresh's work.
        clk = self._clk
        dio = self._dio
        sleep = self._sleep_us
        for _ in range(8):
            bit = byte & 1
            dio(bit)
            byte >>= 1
            sleep(_RISE_US if bit else _HALF_PERIOD_US)  # a 1 must have risen
            clk(1)
            sleep(_RISE_US)
            clk(0)
        return self._ack()

    def _ack(self):
        self._dio(1)  # release: the chip holds DIO low to acknowledge
        self._sleep_us(_HALF_PERIOD_US)
        self._clk(1)
        acked = self._dio() == 0
        self._sleep_us(_RISE_US)
        self._clk(0)
        if not acked:
            self.missing_acks += 1
        return acked


def _check_level(level):
    if not isinstance(level, int) or level < 0 or level > 7:
        raise ValueError("TM1637 brightness must be 0-7, not %r" % (level,))
