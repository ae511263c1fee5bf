"""Builds the ESP32 board from its profile and the board configuration.

    from firmware import hw
    board = hw.build()        # machine.Pin, SPI, SoftI2C and UART objects, wired per profile

The only module of the application that touches `machine`: its functions make the pins,
buses and UART that firmware.assemble (the builder the simulator and the twin share) puts
into one `firmware.board.Board`. The watchdog is not started here: `Board.arm_watchdog()`
does that once the game is loaded (firmware.run).
"""

import machine

from boardlib.display import Display
from firmware.boards import esp32_devkit as profile

try:
    from micropython import const
except ImportError:  # CPython: the integer itself
    const = int


def reset_cause():
    cause = machine.reset_cause()
    for value, name in ((machine.PWRON_RESET, "PWR"), (machine.HARD_RESET, "HARD"),
                        (machine.WDT_RESET, "WDT"), (machine.DEEPSLEEP_RESET, "SLEEP"),
                        (machine.SOFT_RESET, "SOFT")):
        if value == cause:
            return name
    return "?"


_FIRST = []  # [the kind and colon marker it was made for, the display]: made_first()


def made_first():
    """The display, made before the rest of the firmware is loaded (firmware.powerup): a
    heap that runs out later, even while the sources compile, leaves Err 93 a display to
    show on. display() hands this one to the board when board.cfg asks for the same."""
    if len(_FIRST) < 2:  # not made yet (or the heap ran out making it: tried again)
        del _FIRST[:]
        _FIRST.append(None)
        # The display alone, its kind read from board.cfg as plain JSON (the TM1637
        # modules when it cannot be read)
        cfg = {"display": "tm1637", "colon_marker": False}
        given = read_given()
        if given.get("display") in ("tm1637", "max7219"):
            cfg["display"] = given["display"]
        cfg["colon_marker"] = given.get("colon_marker") is True
        made = display(cfg)
        _FIRST[0] = (cfg["display"], cfg["colon_marker"])
        _FIRST.append(made)
    return _FIRST[1]


def display(cfg):
    if _FIRST and _FIRST[0] == (cfg["display"], cfg.get("colon_marker") is True):
        return _FIRST[1]
    Pin = machine.Pin
    # Each driver is imported only by a board that has its display: a board loads one.
    if cfg["display"] == "max7219":
        from boardlib.max7219 import MAX7219

        m = profile.MAX7219
        # miso=None: otherwise SPI(2) claims its default MISO, GPIO 19, which the right
        # TM1637 module's CLK uses in the default wiring (ports/esp32/machine_hw_spi.c).
        spi = machine.SPI(
            m["spi"], baudrate=m["baudrate"], sck=Pin(m["sck"]), mosi=Pin(m["mosi"]), miso=None
        )
        return Display.max7219(MAX7219(spi, Pin(m["cs"], Pin.OUT, value=1)))
    if cfg["display"] == "tm1637":
        from boardlib.tm1637 import FREQ_HZ, TIMEOUT_US, TM1637

        # Each module on its own bus, clocked in C by machine.SoftI2C (boardlib.tm1637)
        modules = []
        for m in (profile.TM1637_LEFT, profile.TM1637_RIGHT):
            bus = machine.SoftI2C(scl=Pin(m["clk"]), sda=Pin(m["dio"]), freq=FREQ_HZ,
                                  timeout=TIMEOUT_US)
            modules.append(TM1637(bus))
        return Display.tm1637(modules[0], modules[1], colon_marker=cfg["colon_marker"])
    return None


def serial(cfg):
    from boardlib.link import Link

    kind = cfg["link"]
    if kind == "off":
        return None
    if kind == "uart0":
        # Shared with the REPL: raw bytes through its stdin and stdout, Ctrl-C off (a
        # 0x03 inside a frame must not stop the firmware); the host skips whatever is
        # not a frame (boot text, tracebacks).
        from boardlib.replstream import ReplStream

        uart = ReplStream()
    else:
        u = profile.LINK_UART
        uart = machine.UART(
            u["id"], u["baudrate"], tx=u["tx"], rx=u["rx"], timeout=0, rxbuf=1024
        )
    import time

    return Link(uart, time.ticks_ms(), board_id=machine.unique_id())


_CPU_HZ = const(240_000_000)  # stock MicroPython starts the ESP32 at 160 MHz (docs/performance.md)


def read_given():
    """board.cfg as plain JSON, unchecked (a dict; empty when there is no file or it is not
    a JSON object): what power-up needs to know before the board is built."""
    try:
        import json

        with open(profile.CONFIG_PATH) as f:
            given = json.load(f)
        if isinstance(given, dict):
            return given
    except Exception:  # noqa: BLE001 - no file, not JSON: nothing given
        pass
    return {}


# What firmware.assemble asks of the ESP32, as this module's own names (the module is the
# parts: no class to load at boot): machine's pins, buses and UART.
watchdog = machine.WDT


def configure(cfg):
    pass


def spot(gpio):
    Pin = machine.Pin
    return Pin(gpio, Pin.IN, Pin.PULL_UP) if profile.SPOT_PULL_UP else Pin(gpio, Pin.IN)


def button(gpio):
    return machine.Pin(gpio, machine.Pin.IN, machine.Pin.PULL_UP)


# False when the last start found no room for the game beside the network link
# (firmware/run.py): the board is built without it.
NETWORK = True


def wlan():
    if not NETWORK:
        return None
    import network

    return network.WLAN(network.STA_IF)


def board_id(cfg):
    return machine.unique_id()


def buzzer(gpio):
    # a passive piezo: square wave at freq, silent at duty 0 (ports/esp32/machine_pwm.c)
    return machine.PWM(machine.Pin(gpio), freq=2000, duty_u16=0)


def build():
    # The full clock: the shot figures of `make bench` are for 240 MHz; at 160 MHz a shot
    # would take longer than its 30 ms target.
    machine.freq(_CPU_HZ)
    import sys

    # here, not at the top: a board too short of memory to be built can still import this
    # module for its display alone (made_first, Err 93)
    from firmware.assemble import assemble

    return assemble(sys.modules[__name__], profile)
