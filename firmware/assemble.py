"""The board built whole from its profile, its board.cfg and what a platform makes: the one
builder of the ESP32 (firmware.hw), the simulator and the twin (tools.sim.board.board).

    board = assemble(parts, profile)           # the ESP32: files at the flash's root
    board = assemble(parts, profile, "/flash") # the simulator: its flash mounted there

`parts` makes the hardware and is all that differs between them:

    parts.configure(cfg)      # a last word on the loaded configuration (the simulator's
                              # --display), or nothing
    parts.spot(gpio)          # a spot's input pin
    parts.button(gpio)        # a button's input pin, pulled up (pressed reads 0)
    parts.display(cfg)        # the Display, or None
    parts.serial(cfg)         # the serial Link, or None (cfg["link"] is "off")
    parts.wlan()              # a network.WLAN for the network link (None: no radio)
    parts.board_id(cfg)       # the id the network link says in its HELLO
    parts.reset_cause()       # "PWR", "WDT", ...
    parts.buzzer(gpio)        # a machine.PWM for the piezo on board.cfg's buzzer_pin (else
                              # the profile's BUZZER_PIN); not asked when there is none
    parts.watchdog            # machine.WDT (None: the board has none)

The order is the board's start-up: the display first, so that a board short of memory
can still say so (Err 93); a network link that does not fit leaves the board playing
without it. Nothing here imports `machine`.
"""

import gc
import os

from boardlib.config import load_config
from boardlib.shot import BUTTON_NAMES
from firmware.board import Board
from firmware.errors import NO_MEMORY


def assemble(parts, profile, root=""):
    config_path = root + profile.CONFIG_PATH
    cfg, cfg_error = load_config(config_path)
    gc.collect()  # what reading the file left is free before the board's parts are made
    parts.configure(cfg)
    if cfg.get("standing_level") is None:
        cfg["standing_level"] = profile.SPOT_STANDING_LEVEL
    spots = [parts.spot(gpio) for gpio in profile.SPOTS]
    buttons = [parts.button(profile.BUTTONS[name]) for name in BUTTON_NAMES]
    data_dir = root + profile.DATA_DIR
    try:
        os.mkdir(data_dir)
    except OSError:
        pass  # already there
    display = parts.display(cfg)
    try:
        net, link, net_error = _links(parts, cfg, root)
    except MemoryError:
        net, link, net_error = None, None, NO_MEMORY
    buzzer = cfg.get("buzzer_pin")
    if buzzer is None:
        buzzer = profile.BUZZER_PIN
    return Board(spots, buttons, display, link, data_dir, config_path, parts.reset_cause(),
                 config=cfg, config_error=cfg_error or net_error,
                 make_watchdog=parts.watchdog, net=net,
                 buzzer=None if buzzer is None else parts.buzzer(buzzer))


def _links(parts, cfg, root):
    """(network link, the link the application talks through, error code): the MQTT link
    beside the serial one when board.cfg has a `net` object. A board whose heap cannot
    hold the network link plays without it and shows Err 93 (errors.NO_MEMORY)."""
    serial = parts.serial(cfg)
    wlan = parts.wlan() if "net" in cfg else None
    if wlan is None:  # no net settings (or, simulated, no WiFi to join)
        return None, serial, 0
    gc.collect()  # what the serial link's compilation left is free before the link's blocks
    try:
        from boardlib.mqttlink import Both, NetLink

        # the club's CA certificate, if any, beside board.cfg
        # (its frames made in the serial link's buffers, one frame at a time)
        net = NetLink(cfg["net"], wlan, 0, board_id=parts.board_id(cfg),
                      ca_path=root + "/ca.der", frames=serial)
    except MemoryError:
        print("pinboard: no memory for the network link: playing without it (Err %d)"
              % NO_MEMORY)
        return None, serial, NO_MEMORY
    return net, (net if serial is None else Both(serial, net)), 0
