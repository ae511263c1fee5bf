"""Builds the ESP32 board from its profile and the board configuration.

    from firmware import hw
    board = hw.build()        # machine.Pin, SPI, SoftI2C and UART objects, wired per profile

The only module of the application that touches `machine`; everything it makes is handed
to the application through `firmware.board.Board`, built whole here. The watchdog is not
started here: `Board.arm_watchdog()` does that once the game is loaded (firmware.run).
"""

import machine

from boardlib.config import load_config
from boardlib.display import Display
from boardlib.shot import BUTTON_NAMES
from firmware.board import Board, NoWatchdog
from firmware.boards import esp32_devkit as profile
from firmware.errors import NO_MEMORY

_CAUSES = (
    (machine.PWRON_RESET, "PWR"),
    (machine.HARD_RESET, "HARD"),
    (machine.WDT_RESET, "WDT"),
    (machine.DEEPSLEEP_RESET, "SLEEP"),
    (machine.SOFT_RESET, "SOFT"),
)


def reset_cause():
    cause = machine.reset_cause()
    for value, name in _CAUSES:
        if value == cause:
            return name
    return "?"


def _display(cfg):
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


def _link(cfg):
    from boardlib.link import Link, repl_stream

    kind = cfg["link"]
    if kind == "off":
        return None
    if kind == "uart0":
        # Shared with the REPL: raw bytes through its stdin and stdout, Ctrl-C off (a
        # 0x03 inside a frame must not stop the firmware); the host skips whatever is
        # not a frame (boot text, tracebacks).
        uart = repl_stream()
    else:
        u = profile.LINK_UART
        uart = machine.UART(
            u["id"], u["baudrate"], tx=u["tx"], rx=u["rx"], timeout=0, rxbuf=1024
        )
    import time

    return Link(uart, time.ticks_ms(), board_id=machine.unique_id())


def _net(cfg, serial_link):
    """The MQTT link beside the serial one when /board.cfg has a `net` object: (net link,
    link, error code). A board whose heap cannot hold the network link plays without it
    and shows Err 93 (errors.NO_MEMORY)."""
    if "net" not in cfg:
        return None, serial_link, 0
    import network

    try:
        from boardlib.linkpair import Both
        from boardlib.mqttlink import NetLink

        net = NetLink(cfg["net"], network.WLAN(network.STA_IF), 0,
                      board_id=machine.unique_id())
    except MemoryError:
        print("pinboard: no memory for the network link: playing without it (Err %d)"
              % NO_MEMORY)
        return None, serial_link, NO_MEMORY
    return net, (net if serial_link is None else Both(serial_link, net)), 0


CPU_HZ = 240_000_000  # stock MicroPython starts the ESP32 at 160 MHz (docs/performance.md)


def build():
    # The full clock: the shot figures of `make bench` are for 240 MHz; at 160 MHz a shot
    # would take longer than its 30 ms target.
    machine.freq(CPU_HZ)
    cfg, cfg_error = load_config(profile.CONFIG_PATH)
    Pin = machine.Pin
    spots = [
        Pin(n, Pin.IN, Pin.PULL_UP) if profile.SPOT_PULL_UP else Pin(n, Pin.IN)
        for n in profile.SPOTS
    ]
    buttons = [
        Pin(profile.BUTTONS[name], Pin.IN, Pin.PULL_UP) for name in BUTTON_NAMES
    ]
    try:
        import os

        os.mkdir(profile.DATA_DIR)
    except OSError:
        pass  # already there
    display = _display(cfg)  # first: a board short of memory can still say so (Err 93)
    try:
        net, link, net_error = _net(cfg, _link(cfg))
    except MemoryError:
        net, link, net_error = None, None, NO_MEMORY
    return Board(
        spots, buttons, display, link, profile.DATA_DIR, profile.CONFIG_PATH,
        NoWatchdog(), reset_cause(),
        standing_level=cfg.get("standing_level", profile.SPOT_STANDING_LEVEL),
        config=cfg, config_error=cfg_error or net_error, make_watchdog=machine.WDT, net=net,
    )
