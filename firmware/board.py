"""What the application sees of a board: pins read as masks, and the parts it drives.

    board = Board(spots, buttons, display, link, data_dir, config_path, wdt, reset_cause,
                  standing_level=0)
    board.read_spots()      # bit i set: spot i+1 reports a pin standing
    board.read_buttons()    # bit i set: button i (carom, foul, ok, undo) is held down

The pins and parts are made elsewhere (firmware.hw on the ESP32, tools.simboard in the
simulator) and handed in: nothing here creates hardware.
"""


class Board:
    net = None  # the network link (boardlib.mqttlink.NetLink) when the board has one

    def __init__(
        self, spots, buttons, display, link, data_dir, config_path, wdt, reset_cause,
        standing_level=0,
    ):
        self.spots = spots
        self.buttons = buttons  # carom, foul, ok, undo: pressed reads 0
        self.display = display
        self.link = link
        self.data_dir = data_dir
        self.config_path = config_path
        self.wdt = wdt
        self.reset_cause = reset_cause
        self.standing_level = standing_level

    def read_spots(self):
        mask = 0
        level = self.standing_level
        spots = self.spots
        for i in range(len(spots)):
            if spots[i].value() == level:
                mask |= 1 << i
        return mask

    def read_buttons(self):
        mask = 0
        buttons = self.buttons
        for i in range(len(buttons)):
            if buttons[i].value() == 0:
                mask |= 1 << i
        return mask


class NoWatchdog:
    """Stands in where no watchdog runs (the simulator, a bench)."""

    def feed(self):
        pass
