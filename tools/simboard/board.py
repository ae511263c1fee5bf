"""The simulated board: the ESP32 DevKit wiring with fake pins, emulated chips and flash.

    from tools.simboard.board import build
    sim = build(display="tm1637", state_dir=None, link_path=None)
    sim.set_spot(3, standing=False)   # a pin falls on spot 3
    sim.set_button(0, pressed=True)   # carom held down
    sim.visible()                     # "  12.  8" - what a person reads on the display
    sim.board                         # the firmware.board.Board the application gets

Runs on the MicroPython unix port. Pin numbers come from the same profile as the real
board, so the simulator exercises the real wiring table, and the `Board` is the firmware's
own, built whole: only the pins are fakes, so the real pin-reading code (with the
configured `standing_level`) runs here too.
"""

import os

from boardlib.config import load_config
from boardlib.display import Display
from boardlib.max7219 import MAX7219
from boardlib.shot import BUTTON_NAMES
from boardlib.tm1637 import TM1637
from firmware.board import Board, NoWatchdog
from firmware.boards import esp32_devkit as profile
from tools.simboard import tm1637_bus
from tools.simboard.chips import MAX7219Emulator, TM1637Emulator, visible_pair
from tools.simboard.flash import FileBlockDev, RamBlockDev, mount
from tools.simboard.pins import FakePin, Wire, line_nf_default
from tools.simboard.softspi import SoftSPI

FLASH_MOUNT = "/flash"
IMAGE_NAME = "flash.img"


class SimBoard:
    def __init__(self, display="tm1637", state_dir=None, link_path=None, bdev=None,
                 config=None, wlan=None, reset_cause="PWR", make_watchdog=None, line_nf=None,
                 board_id=b"sim", ca=None, flash_timing=None, flash_wait=None):
        # The emulators listen; no log to grow. The TM1637 lines carry line_nf nF each
        # ($PINBOARD_LINE_NF or 10): the display bus runs on the wire's virtual clock.
        line_nf = line_nf_default() if line_nf is None else line_nf
        self.wire = wire = Wire(keep=False, line_nf=line_nf)
        self.spot_pins = [FakePin("GPIO%d" % n, 1, wire) for n in profile.SPOTS]
        self.button_pins = [
            FakePin("GPIO%d" % profile.BUTTONS[name], 1, wire)
            for name in BUTTON_NAMES
        ]
        # flash_timing: the erase and program times the flash takes (tools.simboard.flash
        # TIMINGS), in board time (`flash.busy_us`), or in real time with flash_wait
        self.flash = self._mount_flash(state_dir, bdev, flash_timing, flash_wait)
        cfg_path = FLASH_MOUNT + profile.CONFIG_PATH
        if config is not None:  # as `mpremote cp board.cfg :board.cfg` would
            with open(cfg_path, "wb") as f:
                f.write(config)
        if ca is not None:  # the club's CA certificate, beside board.cfg
            with open(FLASH_MOUNT + "/ca.der", "wb") as f:
                f.write(ca)
        cfg, cfg_error = load_config(cfg_path)
        if display:
            cfg["display"] = display
        self.standing_level = cfg.get("standing_level", profile.SPOT_STANDING_LEVEL)
        for i in range(len(self.spot_pins)):
            self.spot_pins[i].value(self.standing_level)  # every pin standing at power-up
        self.chips = []
        disp = self._display(cfg["display"], cfg["colon_marker"])
        link = None
        if link_path:
            from boardlib.link import Link
            from tools.simboard.uart import PtyUART

            # A real board says machine.unique_id(); simulated tables side by side (the
            # club demo) each need their own.
            link = Link(PtyUART(link_path), 0, board_id=board_id)
        self.net = None
        if "net" in cfg and wlan is not None:
            from boardlib.linkpair import Both
            from boardlib.mqttlink import NetLink

            # The id names the board in its HELLO too: boards on one broker stay apart.
            self.net = NetLink(cfg["net"], wlan, 0, board_id=cfg["net"]["id"].encode() or b"sim",
                               ca_path=FLASH_MOUNT + "/ca.der")  # beside board.cfg
            link = self.net if link is None else Both(link, self.net)
        data_dir = FLASH_MOUNT + profile.DATA_DIR
        try:
            os.mkdir(data_dir)
        except OSError:
            pass
        self.board = Board(
            self.spot_pins, self.button_pins, disp, link, data_dir, cfg_path,
            NoWatchdog(), reset_cause, standing_level=self.standing_level,
            config=cfg, config_error=cfg_error, make_watchdog=make_watchdog, net=self.net,
        )

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

    # -- the display ------------------------------------------------------------------------

    def segments(self):
        """The 8 segment bytes on the glass, left to right (TM1637 bit order)."""
        if len(self.chips) == 1:
            return self.chips[0].segments8()
        for chip in self.chips:
            chip.settle()
        return bytes(self.chips[0].segments[:4]) + bytes(self.chips[1].segments[:4])

    def visible(self):
        if len(self.chips) == 1:
            return self.chips[0].visible()
        return visible_pair(self.chips[0], self.chips[1])


def build(display="tm1637", state_dir=None, link_path=None, bdev=None, config=None,
          wlan=None, **kw):
    return SimBoard(display, state_dir, link_path, bdev, config, wlan, **kw)
