"""What the application sees of a board: pins read as masks, and the parts it drives.

    board = assemble(parts, profile)   # firmware.assemble: the one place a Board is made
    board.read_spots()      # bit i set: spot i+1 reports a pin standing
    board.read_buttons()    # bit i set: button i (carom, foul, ok, undo) is held down
    board.arm_watchdog()    # once the game is loaded: config["watchdog_ms"], never stopped
    board.watch_inputs(on_spot, on_button)   # on_spot(pin) when a spot's pin changes, ...

The pins and parts are made elsewhere (firmware.assemble, from the profile, with the parts
of firmware.hw on the ESP32 and of tools.sim.board in the simulator) and handed in whole:
nothing here creates hardware, and nothing is attached afterwards. The simulator's pins are
fakes; this reading code is the same on both.
"""

UNDO_BUTTON = 3  # index in `buttons`: carom, foul, ok, undo


class Board:
    net = None  # the network link (boardlib.mqttlink.NetLink) when the board has one (net=)

    def __init__(self, spots, buttons, display, link, data_dir, config_path, reset_cause,
                 config=None, config_error=0, make_watchdog=None, net=None, buzzer=None):
        self.spots = spots
        self.buttons = buttons  # carom, foul, ok, undo: pressed reads 0
        self.display = display
        self.link = link
        self.data_dir = data_dir
        self.config_path = config_path
        self.wdt = NoWatchdog()  # until arm_watchdog()
        self.reset_cause = reset_cause
        if config is None:
            from boardlib.config import defaults

            config = defaults()
        # the level a standing pin reads: board.cfg's, else the profile's (assemble)
        self.standing_level = config.get("standing_level") or 0
        self.config = config
        self.config_error = config_error
        # machine.WDT on the ESP32: called with timeout=ms once, when the firmware is up.
        self._make_watchdog = make_watchdog
        self.net = net
        self.buzzer = buzzer  # the piezo's PWM (boardlib.buzzer drives it), None: silent
        self.bind_pins()

    def bind_pins(self):
        """Take each pin's read method once (making a bound method allocates; the reads
        run every 5 ms). Done at construction; again after replacing `spots`/`buttons`."""
        self._spot_reads = tuple(pin.value for pin in self.spots)
        self._button_reads = tuple(pin.value for pin in self.buttons)
        self._usual = len(self.spots) == 5 and len(self.buttons) == 4

    def watch_inputs(self, on_spot, on_button):
        """Have every spot pin call on_spot(pin), and every button pin on_button(pin),
        when its level changes (its interrupt; on the ESP32 a soft IRQ, run between two
        bytecodes). True if all can; otherwise the caller has to read them all the time."""
        every = True
        for pins, handler in ((self.spots, on_spot), (self.buttons, on_button)):
            for pin in pins:
                irq = getattr(pin, "irq", None)
                if irq is None:
                    every = False
                else:
                    irq(handler=handler, trigger=pin.IRQ_RISING | pin.IRQ_FALLING)
        return every

    def read_spots(self):
        """Bit i set: spot i+1 reports a pin standing. The usual board's five pins are
        read without a loop (each loop step costs as much as a read)."""
        if not self._usual:
            return self._read_spots()
        s = self._spot_reads
        spots = s[0]() | s[1]() << 1 | s[2]() << 2 | s[3]() << 3 | s[4]() << 4
        return spots if self.standing_level else spots ^ 0x1F  # a standing pin reads 0

    def read_buttons(self):
        """Bit i set: button i (carom, foul, ok, undo) is held down (its pin reads 0)."""
        if not self._usual:
            return self._read_buttons()
        b = self._button_reads
        return (b[0]() | b[1]() << 1 | b[2]() << 2 | b[3]() << 3) ^ 0xF

    def _read_spots(self):
        mask = 0
        bit = 1
        level = self.standing_level
        for read in self._spot_reads:
            if read() == level:
                mask |= bit
            bit <<= 1
        return mask

    def _read_buttons(self):
        mask = 0
        bit = 1
        for read in self._button_reads:
            if not read():
                mask |= bit
            bit <<= 1
        return mask

    def arm_watchdog(self):
        """Start the hardware watchdog with config["watchdog_ms"] (0: none). On the ESP32
        it cannot be stopped again, not even by a soft reset: call this only once the game
        is loaded and the loop is about to run."""
        ms = self.config.get("watchdog_ms", 0)
        if ms and self._make_watchdog is not None:
            self.wdt = self._make_watchdog(timeout=ms)
        return self.wdt


class NoWatchdog:
    """Stands in where no watchdog runs (before it is armed, a bench)."""

    def feed(self):
        pass
