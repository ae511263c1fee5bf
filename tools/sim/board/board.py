"""The simulated board: the ESP32 DevKit wiring with fake pins, emulated chips and flash.

    from tools.sim.board.board import build
    sim = build(display="tm1637", state_dir=None, link_path=None)
    sim.set_spot(3, standing=False)   # a pin falls on spot 3
    sim.set_button(0, pressed=True)   # carom held down
    sim.set_levels(*levels.at(t))     # the table as a timeline has it (timeline.Levels)
    sim.visible()                     # "  12.  8" - what a person reads on the display
    sim.heard()                       # ["scored", "turn"]: the buzzer's calls (a board.cfg
                                      # with "buzzer_pin"; build(clock=...) stamps them)
    sim.board                         # the firmware.board.Board the application gets

Runs on the MicroPython unix port. Pin numbers come from the same profile as the real
board, so the simulator exercises the real wiring table, and the `Board` is the firmware's
own, built whole: only the pins are fakes, so the real pin-reading code (with the
configured `standing_level`) runs here too.
"""

import os

from boardlib.display import Display
from boardlib.max7219 import MAX7219
from boardlib.tm1637 import TM1637
from firmware.assemble import assemble
from firmware.boards import esp32_devkit as profile
from tools.sim.board import tm1637_bus
from tools.sim.board.chips import MAX7219Emulator, TM1637Emulator, visible_pair
from tools.sim.board.flash import FileBlockDev, RamBlockDev, mount
from tools.sim.board.pins import FakePin, Wire, line_nf_default
from tools.sim.board.softspi import SoftSPI

FLASH_MOUNT = "/flash"
IMAGE_NAME = "flash.img"


class _Parts:
    """What firmware.assemble asks of the simulated board: fake pins on one wire, the
    display chips' emulators, a pty for the serial link, the simulated WiFi."""

    def __init__(self, sim, display, link_path, wlan, reset_cause, make_watchdog, board_id):
        self.sim = sim
        self.shown = display
        self.link_path = link_path
        self._wlan = wlan
        self.cause = reset_cause
        self.watchdog = make_watchdog
        self.serial_id = board_id

    buzzer_pin = None

    def configure(self, cfg):
        if self.shown:
            cfg["display"] = self.shown
        if self.buzzer_pin is not None:  # the simulator's --buzzer: a GPIO, or -1 for none
            if self.buzzer_pin < 0:
                cfg.pop("buzzer_pin", None)
            else:
                cfg["buzzer_pin"] = self.buzzer_pin

    def spot(self, gpio):
        pin = FakePin("GPIO%d" % gpio, 1, self.sim.wire)
        self.sim.spot_pins.append(pin)
        return pin

    def button(self, gpio):
        pin = FakePin("GPIO%d" % gpio, 1, self.sim.wire)
        self.sim.button_pins.append(pin)
        return pin

    def display(self, cfg):
        return self.sim._display(cfg["display"], cfg["colon_marker"])

    def serial(self, cfg):
        if not self.link_path:
            return None
        from boardlib.link import Link
        from tools.sim.board.uart import PtyUART

        # A real board says machine.unique_id(); simulated tables side by side (the
        # club demo) each need their own.
        return Link(PtyUART(self.link_path), 0, board_id=self.serial_id)

    def wlan(self):
        return self._wlan  # None: no simulated WiFi, the board plays without the network

    def board_id(self, cfg):
        # The id names the board in its HELLO too: boards on one broker stay apart.
        return cfg["net"]["id"].encode() or b"sim"

    def reset_cause(self):
        return self.cause

    def buzzer(self, gpio):
        # a piezo's PWM whose changes are stamped with the board's time (the simulator's
        # clock), so that what would be heard can be decoded (tools.sim.board.chips)
        from tools.sim.board.chips import PWMEmulator

        clock = self.sim.clock
        if clock is None:
            import time

            clock = time.ticks_ms
        self.sim.pwm = PWMEmulator(clock, "GPIO%d" % gpio, freq=2000, duty_u16=0)
        return self.sim.pwm


class SimBoard:
    def __init__(self, display="tm1637", state_dir=None, link_path=None, bdev=None,
                 config=None, wlan=None, reset_cause="PWR", make_watchdog=None, line_nf=None,
                 board_id=b"sim", ca=None, flash_timing=None, flash_wait=None, clock=None,
                 buzzer_pin=None):
        # The emulators listen; no log to grow. The TM1637 lines carry line_nf nF each
        # ($PINBOARD_LINE_NF or 10): the display bus runs on the wire's virtual clock.
        line_nf = line_nf_default() if line_nf is None else line_nf
        self.wire = Wire(keep=False, line_nf=line_nf)
        # flash_timing: the erase and program times the flash takes (tools.sim.board.flash
        # TIMINGS), in board time (`flash.busy_us`), or in real time with flash_wait
        self.flash = self._mount_flash(state_dir, bdev, flash_timing, flash_wait)
        if config is not None:  # as `mpremote cp board.cfg :board.cfg` would
            with open(FLASH_MOUNT + profile.CONFIG_PATH, "wb") as f:
                f.write(config)
        if ca is not None:  # the club's CA certificate, beside board.cfg
            with open(FLASH_MOUNT + "/ca.der", "wb") as f:
                f.write(ca)
        self.spot_pins, self.button_pins, self.chips = [], [], []
        self.clock, self.pwm = clock, None  # the buzzer's PWM (board.cfg buzzer_pin), if any
        parts = _Parts(self, display, link_path, wlan, reset_cause, make_watchdog, board_id)
        parts.buzzer_pin = buzzer_pin  # the simulator's --buzzer over board.cfg's (-1: none)
        # the firmware's own builder (firmware.assemble), over fake pins and emulators
        self.board = assemble(parts, profile, FLASH_MOUNT)
        self.net = self.board.net
        self.standing_level = self.board.standing_level
        for pin in self.spot_pins:
            pin.value(self.standing_level)  # every pin standing at power-up
        self._levels = (-1, -1)  # what set_levels last wrote: nothing yet

    def _mount_flash(self, state_dir, bdev=None, timing=None, wait=None):
        if bdev is not None:
            pass
        elif state_dir:
            try:
                os.mkdir(state_dir)
            except OSError:
                pass
            bdev = FileBlockDev(state_dir + "/" + IMAGE_NAME, timing=timing, wait=wait)
        else:
            bdev = RamBlockDev(timing=timing, wait=wait)
        mount(bdev, FLASH_MOUNT)
        return bdev

    def _display(self, kind, colon_marker=False):
        wire = self.wire
        if kind == "max7219":
            din = FakePin("GPIO%d" % profile.MAX7219["mosi"], 0, wire)
            clk = FakePin("GPIO%d" % profile.MAX7219["sck"], 0, wire)
            cs = FakePin("GPIO%d" % profile.MAX7219["cs"], 1, wire)
            self.chips = [MAX7219Emulator(din, clk, cs)]
            return Display.max7219(MAX7219(SoftSPI(clk, din), cs))
        pins = []
        for side in (profile.TM1637_LEFT, profile.TM1637_RIGHT):
            clk = FakePin("GPIO%d" % side["clk"], 1, wire)
            dio = FakePin("GPIO%d" % side["dio"], 1, wire)
            # colon_marker is set for the "clock" modules, which wire only the colon
            self.chips.append(TM1637Emulator(clk, dio, colon_only=colon_marker))
            pins.append(TM1637(tm1637_bus(clk, dio)))
        return Display.tm1637(pins[0], pins[1], colon_marker=colon_marker)

    # -- the table --------------------------------------------------------------------------

    def set_spot(self, spot, standing):
        level = self.standing_level if standing else 1 - self.standing_level
        self.spot_pins[spot - 1].value(level)

    def set_standing_mask(self, mask):
        for i in range(len(self.spot_pins)):
            self.set_spot(i + 1, bool(mask & (1 << i)))

    def set_button(self, index, pressed):
        self.button_pins[index].value(0 if pressed else 1)

    def set_levels(self, standing, buttons):
        """The table as a timeline has it at a moment (timeline.Levels.at): the spots
        standing and the buttons held, each a mask (bit 0 spot 1, carom). Only what changed
        since the last call is written, so a run can call it at every step."""
        if standing != self._levels[0]:
            self.set_standing_mask(standing)
        if buttons != self._levels[1]:
            for i in range(len(self.button_pins)):
                self.set_button(i, bool(buttons & (1 << i)))
        self._levels = (standing, buttons)

    # -- the display ------------------------------------------------------------------------

    def segments(self):
        """The 8 segment bytes on the glass, left to right (TM1637 bit order)."""
        if len(self.chips) == 1:
            return self.chips[0].segments8()
        for chip in self.chips:
            chip.settle()
        return bytes(self.chips[0].segments[:4]) + bytes(self.chips[1].segments[:4])

    def tones(self):
        """What the buzzer sounded: [(start ms, Hz, ms), ...] (None: no buzzer)."""
        return None if self.pwm is None else self.pwm.tones()

    def heard(self):
        """The calls the buzzer played, by name (boardlib.calls.NAMES); None: no buzzer."""
        return None if self.pwm is None else self.pwm.heard()

    def visible(self):
        if len(self.chips) == 1:
            return self.chips[0].visible()
        return visible_pair(self.chips[0], self.chips[1])


def build(display="tm1637", state_dir=None, link_path=None, bdev=None, config=None,
          wlan=None, **kw):
    return SimBoard(display, state_dir, link_path, bdev, config, wlan, **kw)
