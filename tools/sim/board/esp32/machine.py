"""The twin's `machine`: the ESP32 port's module over the twin's hardware.

    import machine            # in the twin, sys.modules["machine"] is this module
    machine.Pin(13, machine.Pin.IN, machine.Pin.PULL_UP)

Follows ports/esp32: machine_pin.c (a Pin is the GPIO's one object), machine_hw_spi.c
(SPI(2) takes sck 18, mosi 23 and miso 19 unless told otherwise: miso=None leaves 19
alone), extmod/machine_i2c.c (SoftI2C, tools/sim/board/softi2c.py), machine_wdt.c
(WDT(timeout=ms) with ms > 0, feed(), no way to stop it; the host side enforces it across
soft resets), modmachine.c (reset() is a hard reset, reset_cause() names the last hard
reset, or SOFT_RESET after a soft one).
"""

from tools.sim.board.chips import PWMEmulator  # (imported now, as the two below)
from tools.sim.board.pins import FakePin
from tools.sim.board.softi2c import SoftI2C as _SoftI2C  # imported now: later the board's
from tools.sim.board.softspi import SoftSPI  # flash is /

PWRON_RESET = 1
HARD_RESET = 2
WDT_RESET = 3
DEEPSLEEP_RESET = 4
SOFT_RESET = 5

_CAUSES = {"PWR": PWRON_RESET, "HARD": HARD_RESET, "WDT": WDT_RESET, "SOFT": SOFT_RESET}
_SPI_DEFAULTS = {1: (14, 13, 12), 2: (18, 23, 19)}  # sck, mosi, miso
_UNSET = object()

_board = {"hw": None, "cause": "PWR", "wdt_s": False, "id": b"\x24\x0a\xc4\x12\x34\x56"}


def attach(hardware, cause, row=None, chip_id=None):
    """row: the release played (releases.py); its `wdt_s` rounds WDT timeouts down to
    whole seconds, as 1.20 does. chip_id: the last three bytes of the MAC address."""
    if chip_id:
        _board["id"] = b"\x24\x0a\xc4" + chip_id
    _board["hw"] = hardware
    _board["cause"] = cause
    _board["wdt_s"] = bool(row and row["wdt_s"])


def _hw():
    return _board["hw"]


class Pin:
    IN = FakePin.IN
    OUT = FakePin.OUT
    OPEN_DRAIN = FakePin.OPEN_DRAIN
    PULL_UP = FakePin.PULL_UP
    PULL_DOWN = FakePin.PULL_DOWN
    IRQ_RISING = 1
    IRQ_FALLING = 2

    def __new__(cls, id, mode=-1, pull=-1, value=None):
        if not isinstance(id, int) or not 0 <= id <= 39 or 6 <= id <= 11:
            raise ValueError("invalid pin")
        pin = _hw().pin(id)
        if mode != -1 or pull != -1 or value is not None:
            pin.init(mode, pull, value)
        _hw().claims.pop(id, None)  # the GPIO is a plain pin again
        return pin


class WDT:
    def __init__(self, id=0, timeout=5000):
        if id != 0:
            raise ValueError()
        if _board["wdt_s"]:  # 1.20: esp_task_wdt_init takes whole seconds
            timeout = timeout // 1000 * 1000
        if timeout <= 0:
            raise ValueError("WDT timeout too short")
        _hw().send("W %d" % timeout)

    def feed(self):
        _hw().send("F")


def reset():
    import micropython

    micropython.kbd_intr(-1)  # esp_restart() cannot be interrupted: nor can this
    hw = _hw()
    hw.send("R HARD")
    import time

    while not hw.host_gone:  # the host side restarts the chip
        time.sleep_ms(100)
        hw.poll_host()
    raise SystemExit(0)


def soft_reset():
    raise SystemExit()


def reset_cause():
    return _CAUSES[_board["cause"]]


def unique_id():
    """The chip's MAC address: Espressif's prefix, then three bytes of this twin's own
    (rom.py --unique-id: boards side by side differ, as real ones do)."""
    return _board["id"]


def freq(hz=None):
    return 240000000


def idle():
    pass


def disable_irq():
    return 0


def enable_irq(state=0):
    pass


class SPI:
    def __init__(self, id, baudrate=1000000, polarity=0, phase=0, bits=8, firstbit=0,
                 sck=None, mosi=None, miso=_UNSET):
        if id not in _SPI_DEFAULTS:
            raise ValueError("SPI(%s) doesn't exist" % (id,))
        d_sck, d_mosi, d_miso = _SPI_DEFAULTS[id]
        hw = _hw()
        sck = sck if sck is not None else Pin(d_sck)
        mosi = mosi if mosi is not None else Pin(d_mosi)
        if miso is _UNSET:
            # The GPIO matrix routes the default MISO to the SPI peripheral: it stops
            # being whatever it was (the right TM1637's CLK in the default wiring).
            miso_pin = hw.pin(d_miso)
            miso_pin.init(FakePin.IN)
            hw.claims[d_miso] = "SPI(%d) miso" % id
        hw.claims[_gpio(sck)] = "SPI(%d) sck" % id
        hw.claims[_gpio(mosi)] = "SPI(%d) mosi" % id
        self._spi = SoftSPI(sck, mosi)

    def write(self, buf):
        self._spi.write(buf)

    def deinit(self):
        pass


class SoftI2C(_SoftI2C):
    """machine.SoftI2C (extmod/machine_i2c.c): bit-banged on the GPIOs' own pins, which
    stay plain pins (no peripheral claims them)."""

    def __init__(self, scl, sda, *, freq=400000, timeout=50000):
        _SoftI2C.__init__(self, scl, sda, freq=freq, timeout=timeout)


def _gpio(pin):
    return int(pin.name[4:])


class PWM:
    """machine.PWM as the firmware uses it (a piezo: freq and duty_u16), the ESP32's way:
    the pin becomes the LEDC's output (ports/esp32/machine_pwm.c, v1.22.0). Changes are
    recorded with the twin's ticks_ms, for a test to decode (tools.sim.board.chips)."""

    def __init__(self, pin, freq=5000, duty_u16=0, **kw):
        import time

        _hw().claims[_gpio(pin)] = "PWM"
        self._emu = PWMEmulator(time.ticks_ms, pin.name, freq=freq, duty_u16=duty_u16)
        self.freq = self._emu.freq
        self.duty_u16 = self._emu.duty_u16
        self.deinit = self._emu.deinit


class UART:
    """UART2 reaches the twin's link pty when it has one; otherwise nothing is wired."""

    def __init__(self, id, baudrate=115200, tx=None, rx=None, timeout=0, rxbuf=256, **kw):
        hw = _hw()
        for gpio in (tx, rx):
            if gpio is not None:
                hw.claims[gpio if isinstance(gpio, int) else _gpio(gpio)] = "UART(%d)" % id
        self._port = hw.link if id == 2 else None

    def any(self):
        return self._port.any() if self._port else 0

    def readinto(self, buf, nbytes=None):
        return self._port.readinto(buf) if self._port else None

    def read(self, n=-1):
        if not self._port or not self._port.any():
            return None
        buf = bytearray(256 if n < 0 else n)
        got = self._port.readinto(buf)
        return bytes(buf[:got]) if got else None

    def write(self, buf):
        return self._port.write(buf) if self._port else len(buf)
