"""The twin's wiring: the ESP32 DevKit profile's pins as fake pins, with the parts on them.

    hw = Hardware(display="tm1637", line_nf=10, inputs={15: 0})   # undo held at power-up
    hw.pin(13)                  # the FakePin of GPIO 13 (machine.Pin(13) returns it)
    hw.visible()                # what the display modules show
    hw.claims                   # GPIO -> what a peripheral claimed it for ("SPI(2) miso")

Spots and buttons are switches to ground on input pins (the host closes and opens them:
`set_input`). The display is two TM1637 modules (CLK and DIO with the modules' 10 kOhm
pull-ups and `line_nf` nF each) or one MAX7219 module, as the profile wires them. The
host side of the twin talks to this over two pipes: `P gpio level ms` lines in (a switch
change, stamped with the host's clock), events out (`D text` when the display changes,
`W ms`/`F` for the watchdog, `R ...` for resets).
"""

import select

from firmware.boards import esp32_devkit as profile
from tools.sim.board.chips import MAX7219Emulator, TM1637Emulator, visible_pair
from tools.sim.board.pins import FakePin, Wire


class _Emulator(TM1637Emulator):
    """A TM1637 that tells the hardware after every complete frame."""

    def __init__(self, clk, dio, hardware):
        self.hardware = hardware
        TM1637Emulator.__init__(self, clk, dio)

    # The lines' RC model allocates a little at every edge, in the board's heap: on a
    # board whose heap is full, that must not fail the firmware's write (reserve below).
    def _raw_clk(self, pin, level):
        self.hardware.spare(TM1637Emulator._raw_clk, self, pin, level)

    def _raw_dio(self, pin, level):
        self.hardware.spare(TM1637Emulator._raw_dio, self, pin, level)

    def _on_dio(self, pin, level):
        frames = self.frames
        TM1637Emulator._on_dio(self, pin, level)
        if self.frames != frames:
            self.hardware.display_changed()


class _Max(MAX7219Emulator):
    def __init__(self, din, clk, cs, hardware):
        MAX7219Emulator.__init__(self, din, clk, cs)
        self.hardware = hardware

    def _on_cs(self, pin, level):
        MAX7219Emulator._on_cs(self, pin, level)
        if level:
            self.hardware.display_changed()


class _InputPin(FakePin):
    """A spot or button pin: reading it first takes the host's latest switch changes."""

    hardware = None

    def value(self, v=None):
        if v is None:
            self.hardware.poll_host()
        return FakePin.value(self, v)


class Hardware:
    def __init__(self, display="tm1637", line_nf=10, inputs=None, ctl_in=None, ctl_out=None,
                 link_path=None, clock_us=None):
        # The display lines' RC runs on the chip's own clock: real time, as the driver's
        # sleep_us (esptime) waits in real time.
        self.wire = Wire(keep=False, line_nf=line_nf, clock_us=clock_us)
        self.pins = {}
        self.claims = {}
        self.ctl_in = ctl_in
        self.ctl_out = ctl_out
        self.link = None
        if link_path:  # opened now: the board's filesystem replaces the host's at boot
            from tools.sim.board.uart import PtyUART

            self.link = PtyUART(link_path)
        self._shown = None
        self.radio_switch = None  # espnet.set_up, when the board has a radio
        self.heap_report = None  # a str of the growing heap (esp32/rom.py), when it grows
        self._untold = False  # a picture the host has not been told of yet
        self.ballast = None  # rom.py --heap: what keeps the rest of the heap from the board
        self._spent = 0
        self.host_gone = False
        self._poll = None
        # The host's switch changes not made yet, (host ms, gpio, level), and the host ms
        # and chip us of the one made last while more waited: see poll_host
        self._changes = []
        self._made = None
        if ctl_in is not None:
            self._poll = select.poll()
            self._poll.register(ctl_in, select.POLLIN)
        inputs = inputs or {}
        for gpio in tuple(profile.SPOTS) + tuple(profile.BUTTONS.values()):
            pin = self.pins[gpio] = _InputPin("GPIO%d" % gpio, 1, self.wire, FakePin.IN)
            pin.hardware = self
            pin.external(inputs.get(gpio, 1))  # 1: the switch is open
        self.chips = []
        if display == "tm1637":
            for side in (profile.TM1637_LEFT, profile.TM1637_RIGHT):
                self.chips.append(_Emulator(self.pin(side["clk"]), self.pin(side["dio"]), self))
        elif display == "max7219":
            m = profile.MAX7219
            self.chips.append(_Max(self.pin(m["mosi"]), self.pin(m["sck"]), self.pin(m["cs"]),
                                   self))

    def spare(self, function, *args):
        """function(*args); should the board's heap be full, a block of the ballast that
        keeps the rest of the unix port's heap from the board (rom.py --heap) is let go,
        and it runs again: the emulators are the twin's, not the board's."""
        while True:
            try:
                return function(*args)
            except MemoryError:
                ballast = self.ballast
                if ballast is None or self._spent >= len(ballast):
                    raise
                ballast[self._spent] = None  # stored, never loaded: no stale address of it
                self._spent += 1  # on the stack keeps it from the collector
                import gc

                gc.collect()

    def pin(self, gpio, mode=FakePin.OPEN_DRAIN):
        pin = self.pins.get(gpio)
        if pin is None:
            pin = self.pins[gpio] = FakePin("GPIO%d" % gpio, 1, self.wire, mode)
        return pin

    # -- host channel ----------------------------------------------------------------------

    def send(self, line):
        if self.ctl_out is not None:
            self.ctl_out.write((line + "\n").encode())

    def settle(self):
        """Let the display lines that have risen by now reach the chips (the firmware
        reads its inputs often; a board that stopped at the REPL or in a halt does not)."""
        try:
            if self.chips and self.wire.rise_us > 0:
                now = self.wire.clock_us()
                for chip in self.chips:
                    if hasattr(chip, "settle"):
                        chip.settle(now)
            if self._untold:
                self.display_changed()
        except MemoryError:
            self._untold = True

    def poll_host(self):
        """Apply the host's input changes (called on every input-pin read), and let the
        display lines that have risen by now reach the chips.

        A change is made as the chip's clock reaches it: the host stamps each with its own
        clock (`P gpio level ms`), and changes that were waiting together (the chip
        process ran late, as on a loaded machine) are made as far apart on the chip's clock
        as the host made them. Made all at once, a pin held down for 300 ms and let go
        was down for a single read, which the firmware's debounce rightly takes for a
        bounce: the shot was lost, where a board's pin stays down its 300 ms."""
        self.settle()
        self._read_host()
        if self._changes:
            self._make_changes()

    def _read_host(self):
        """Take every line the host has sent by now (changes are queued, not made)."""
        while self._poll is not None:
            took = False
            for _ in self._poll.ipoll(0):
                took = True
                self._take(self.ctl_in.readline())
            if not took:
                break

    def _take(self, line):
        if not line:  # the host went away: so does the chip
            self._poll = None
            self.host_gone = True
            raise SystemExit(0)
        parts = line.split()
        if parts and parts[0] == b"P":
            self._changes.append((int(parts[3]) if len(parts) > 3 else None, int(parts[1]),
                                  int(parts[2])))
        elif parts and parts[0] == b"N" and self.radio_switch is not None:
            self.radio_switch(int(parts[1]))  # the access point comes or goes
        elif parts and parts[0] == b"H" and self.heap_report is not None:
            self.send("H " + self.heap_report())  # the growing heap's areas

    def flash_wait(self, us, sleep_us):
        """The flash's erase or program: the chip runs nothing for `us` (the block
        device's wait, esp32/rom.py, `sleep_us` in real time). The firmware reads no pin
        meanwhile, so a switch closed and opened again in that time is never seen: what
        the host changed by the end is made at once, each pin at its last level, as a
        board reads them after it."""
        sleep_us(us)
        self._read_host()
        for _, gpio, level in self._changes:
            self.set_input(gpio, level)
        self._changes.clear()
        self._made = None

    def _make_changes(self):
        changes = self._changes
        while changes:
            host_ms, gpio, level = changes[0]
            now = self.wire.clock_us()
            if self._wait_us(host_ms, now) > 0:
                return
            changes.pop(0)
            # the next one waits its time after this one; one sent later is made at once
            self._made = (host_ms, now) if changes else None
            self.set_input(gpio, level)

    def _wait_us(self, host_ms, now):
        """How long the chip's clock has still to run before the change stamped `host_ms`
        is made (0 or less: now)."""
        made = self._made
        if made is None or host_ms is None or made[0] is None:
            return 0
        return (host_ms - made[0]) * 1000 - (now - made[1])

    def wait_host(self, ms):
        """Sleep up to `ms`, or until the host has sent something (a switch change), or a
        change waiting is due."""
        if self._changes:
            due = self._wait_us(self._changes[0][0], self.wire.clock_us()) // 1000
            ms = max(0, min(ms, due))
        if self._poll is not None:
            self._poll.poll(ms)

    def set_input(self, gpio, level):
        self.pin(gpio, FakePin.IN).external(level)

    # -- display ---------------------------------------------------------------------------

    def visible(self):
        if not self.chips:
            return ""
        if len(self.chips) == 1:
            return self.chips[0].visible()
        return visible_pair(self.chips[0], self.chips[1])

    def display_changed(self):
        # The emulators run in the board's heap: one the firmware has filled must not make
        # the board's own code fail here; the picture is told at the next chance instead.
        try:
            text = self.spare(Hardware.visible, self)
        except MemoryError:
            self._untold = True
            return
        self._untold = False
        if text != self._shown:
            self._shown = text
            self.send("D " + text.replace(" ", "_"))
