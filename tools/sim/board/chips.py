"""Emulators of the display chips: they read the pins' edges back into what a person sees.

    from tools.sim.board.pins import FakePin, Wire
    from tools.sim.board.chips import TM1637Emulator, TM1637Pair, MAX7219Emulator
    wire = Wire()
    clk, dio = FakePin("clk1", wire=wire), FakePin("dio1", wire=wire)
    left = TM1637Emulator(clk, dio)      # listens to the pins; drive them with the driver
    ...
    TM1637Pair(left, right).visible()    # e.g. " . 25 130": 8 characters, marks after them
    left.errors, left.last_error         # protocol errors seen (bad framing, missing ACK)

TM1637Emulator follows start (DIO falls, CLK high) and stop (DIO rises, CLK high),
samples DIO on CLK rising edges, LSB first, and after the 8th bit pulls DIO low until the
falling edge of the 9th (acknowledge) clock, as the chip does. It takes the data command
(0x40 auto-increment, 0x44 fixed address), the address command 0xC0 + grid (0-5) with its
data bytes, and display control 0x80 | on << 3 | brightness. Anything else - an unknown
command, a byte cut short by a stop, bytes after a command that takes none, a grid past 5
- is counted in `errors` (the chip would show garbage or nothing).

MAX7219Emulator shifts DIN into a 16-bit register on every CLK rising edge and latches
it on the rising edge of LOAD (CS): registers 0x01-0x08 (digits), 0x09 decode mode (code
B for the digits whose bit is set), 0x0A intensity, 0x0B scan limit (digits past it are
dark), 0x0C shutdown (all dark while 0), 0x0F display test (all segments on). A latch
after a bit count that is not a multiple of 16, or a write to a register the chip does
not have, is counted in `errors`.

`visible()` gives the characters left to right, each followed by '.' when its decimal
point is lit; on a TM1637 module the dot of the second cell is the clock colon, shown ':'.
`TM1637Emulator(..., colon_only=True)` is a clock module with no decimal points wired.

Line capacitance (the pins' `Wire(line_nf=...)`): a falling edge is driven and seen at
once; a released line rises through the module's pull-up and the chip sees it high only
`wire.rise_us` later (0.7 VDD). A CLK pulse shorter than that is never seen, and a bit
whose DIO had not risen when CLK was seen rising is read as 0: the garbage a too-fast
driver gives on real modules.
"""

from boardlib import font


def decode_segments(byte):
    """The character a segment byte shows (bit 7 ignored), as boardlib.font draws it; '?'
    for a shape not in the font. A shape two characters share reads as the first the font
    lists (digits win: "SEt" reads "5Et", exactly what a person sees). The board never
    reads its display back, so the reading is the simulator's."""
    shape = byte & 0x7F
    glyphs = font._GLYPHS
    for i in range(len(glyphs)):
        if glyphs[i] == shape:
            return font._CHARS[i]
    return "?"

# TM1637 command classes (the top two bits of the first byte of a frame).
_TM_DATA = 0x40
_TM_CONTROL = 0x80
_TM_ADDRESS = 0xC0
_TM_GRIDS = 6
_TM_COLON_GRID = 1

# Code B font of the MAX7219 (low nibble), as font-order segment bytes: 0-9 - E H L P blank.
_CODE_B = b"\x3f\x06\x5b\x4f\x66\x6d\x7d\x07\x7f\x6f\x40\x79\x76\x38\x73\x00"


class TM1637Emulator:
    def __init__(self, clk, dio, grids=4, colon_only=False):
        self.clk = clk
        self.dio = dio
        self.grids = grids  # how many the module has wired (4 on the common modules)
        self.colon_only = colon_only  # a clock module: no decimal points, only the colon
        self.segments = bytearray(_TM_GRIDS)
        self.brightness = 0
        self.on = False  # the chip powers up with the display off
        self.fixed_address = False
        self.errors = 0
        self.last_error = None
        self.frames = 0
        self._in_frame = False
        self._bits = 0  # 0-7 data bits so far, 8 = waiting for the ACK clock, 9 = in it
        self._byte = 0
        self._index = 0  # bytes in the current frame
        self._command = 0
        self._address = 0
        self._clk_seen = clk.value()  # the levels as the chip reads them
        self._dio_seen = dio.value()
        self._rises = []  # [when, "c" or "d"]: released lines still on their way up
        clk.listen(self._raw_clk)
        dio.listen(self._raw_dio)

    # -- the lines as the chip sees them ----------------------------------------------------

    # Ideal lines (no capacitance) take the short way, which allocates nothing: a frame
    # as big as _raw's comes from the heap on MicroPython.

    def _raw_clk(self, pin, level):
        if self._rises or self.clk.wire.rise_us > 0:
            self._raw("c", level)
        else:
            self._seen("c", level)

    def _raw_dio(self, pin, level):
        if self._rises or self.clk.wire.rise_us > 0:
            self._raw("d", level)
        else:
            self._seen("d", level)

    def _raw(self, line, level):
        wire = self.clk.wire
        now = wire.clock_us()
        self.settle(now)
        if level and wire.rise_us > 0:
            self._rises.append([now + wire.rise_us, line])
            return
        if not level:
            self._rises = [r for r in self._rises if r[1] != line]  # cut short
        self._seen(line, level)

    def settle(self, now=None):
        """Let every rise due by `now` (all of them when None) reach the chip, in order."""
        while self._rises:
            first = min(self._rises)
            if now is not None and first[0] > now:
                return
            self._rises.remove(first)
            self._seen(first[1], 1)

    def _seen(self, line, level):
        if line == "c":
            if self._clk_seen != level:
                self._clk_seen = level
                self._on_clk(self.clk, level)
        elif self._dio_seen != level:
            self._dio_seen = level
            self._on_dio(self.dio, level)

    # -- the decoder ------------------------------------------------------------------------

    def _error(self, what):
        self.errors += 1
        self.last_error = what

    def _on_dio(self, pin, level):
        if not self._clk_seen:
            return  # data changing while CLK is low: ordinary bit set-up
        if level == 0:
            if self._in_frame:
                self._error("start inside a frame")
            self._in_frame = True
            self._bits = 0
            self._byte = 0
            self._index = 0
        elif self._in_frame:
            # The CLK rise that sets up a stop was clocked as the first bit of a next
            # byte (a chip cannot tell in advance): a clean stop leaves exactly that one
            # bit, read low. A stop right after the start (no clock at all: a bus being
            # set up, machine.SoftI2C's first stop) carries no command: nothing happens.
            if self._bits == 0 and self._index == 0:
                self._in_frame = False
                return
            if self._bits != 1 or self._byte != 0:
                self._error("stop after %d bits of a byte" % self._bits)
            self._in_frame = False
            self.frames += 1

    def _on_clk(self, pin, level):
        if not self._in_frame:
            return
        if level:
            if self._bits < 8:
                self._byte |= self._dio_seen << self._bits
                self._bits += 1
            elif self._bits == 8:
                self._bits = 9
                self._take(self._byte)
        elif self._bits == 8:
            self.dio.external(0)  # acknowledge until the 9th clock falls
        elif self._bits == 9:
            self.dio.external(1)
            self._bits = 0
            self._byte = 0

    def _take(self, byte):
        index = self._index
        self._index += 1
        if index == 0:
            self._command = byte
            kind = byte & 0xC0
            if kind == _TM_DATA:
                if byte & 0x3B:  # read keys, test mode or reserved bits
                    self._error("unsupported data command 0x%02x" % byte)
                self.fixed_address = bool(byte & 0x04)
            elif kind == _TM_CONTROL:
                self.on = bool(byte & 0x08)
                self.brightness = byte & 0x07
            elif kind == _TM_ADDRESS:
                self._address = byte & 0x0F
                if self._address >= _TM_GRIDS or byte & 0x30:
                    self._error("bad address command 0x%02x" % byte)
            else:
                self._error("unknown command 0x%02x" % byte)
            return
        if self._command & 0xC0 != _TM_ADDRESS:
            self._error("data byte after command 0x%02x" % self._command)
            return
        if self._address >= _TM_GRIDS:
            self._error("data past the last grid")
            return
        self.segments[self._address] = byte
        if not self.fixed_address:
            self._address += 1

    def cells(self):
        """The segment bytes a person sees on the module's grids (0 when dark)."""
        self.settle()  # by the time anyone looks, the lines have settled
        out = bytearray(self.grids)
        if self.on:
            for i in range(self.grids):
                out[i] = self.segments[i]
                if self.colon_only and i != _TM_COLON_GRID:
                    out[i] &= 0x7F  # the dot is not wired
        return bytes(out)

    def visible(self):
        out = ""
        cells = self.cells()
        for i in range(self.grids):
            out += decode_segments(cells[i])
            if cells[i] & 0x80:
                out += ":" if i == _TM_COLON_GRID else "."
        return out


def visible_pair(left, right):
    """What a person reads on two TM1637 modules side by side, left first."""
    return left.visible() + right.visible()


class TM1637Pair:
    """Two TM1637 modules side by side: player 1's on the left."""

    def __init__(self, left, right):
        self.left = left
        self.right = right

    @property
    def errors(self):
        return self.left.errors + self.right.errors

    def visible(self):
        return visible_pair(self.left, self.right)


class MAX7219Emulator:
    def __init__(self, din, clk, cs, digits=8):
        self.din = din
        self.clk = clk
        self.cs = cs
        self.digits = digits  # positions on the module; digit 0 is the rightmost
        self.digit = bytearray(8)  # registers 0x01-0x08, raw order (dp a b c d e f g)
        self.decode = 0
        self.intensity = 0
        self.scan_limit = 0
        self.shutdown = True  # power-up state
        self.test = False
        self.errors = 0
        self.last_error = None
        self.frames = 0
        self._shift = 0
        self._count = 0
        clk.listen(self._on_clk)
        cs.listen(self._on_cs)

    def _error(self, what):
        self.errors += 1
        self.last_error = what

    def _on_clk(self, pin, level):
        if level:
            self._shift = ((self._shift << 1) | self.din.value()) & 0xFFFF
            self._count += 1

    def _on_cs(self, pin, level):
        if not level:
            return
        count = self._count
        self._count = 0
        if count == 0 or count % 16:
            self._error("latched after %d bits" % count)
            if count < 16:
                return
        self.frames += 1
        self._latch(self._shift >> 8, self._shift & 0xFF)

    def _latch(self, address, data):
        address &= 0x0F  # D15-D12 are don't-care bits
        if 1 <= address <= 8:
            self.digit[address - 1] = data
        elif address == 0x09:
            self.decode = data
        elif address == 0x0A:
            self.intensity = data & 0x0F
        elif address == 0x0B:
            self.scan_limit = data & 0x07
        elif address == 0x0C:
            self.shutdown = not (data & 0x01)
        elif address == 0x0F:
            self.test = bool(data & 0x01)
        elif address != 0x00:  # 0x00 is the no-op register
            self._error("no register 0x%02x" % address)

    def cells(self):
        """Font-order segment bytes a person sees, left to right."""
        out = bytearray(self.digits)
        for pos in range(self.digits):
            index = self.digits - 1 - pos  # digit register index, 0 = rightmost
            if self.test:
                out[pos] = 0xFF
            elif self.shutdown or index > self.scan_limit:
                out[pos] = 0
            else:
                out[pos] = self._shape(index)
        return bytes(out)

    def segments8(self):
        """The 8 lit segment bytes, left to right, in font order (same as cells())."""
        return self.cells()

    def _shape(self, index):
        data = self.digit[index]
        if self.decode & (1 << index):
            return _CODE_B[data & 0x0F] | (data & 0x80)
        shape = data & 0x80
        for bit in range(7):  # chip bit 6 (a) -> font bit 0, ..., chip bit 0 (g) -> bit 6
            if data & (1 << (6 - bit)):
                shape |= 1 << bit
        return shape

    def visible(self):
        out = ""
        for byte in self.cells():
            out += decode_segments(byte)
            if byte & 0x80:
                out += "."
        return out


class PWMEmulator:
    """A PWM output with a passive piezo on it: records every change of frequency or duty
    with the board's time, so a test decodes what would be heard (`tones()`, `heard()`).

        pwm = PWMEmulator(lambda: now_ms, "GPIO2", freq=2000, duty_u16=0)
        pwm.changes            # [(ms, Hz, duty_u16), ...] after each change
        pwm.tones()            # [(start ms, Hz, ms), ...] what sounded
        pwm.heard()            # the boardlib.calls call names those tones play

    It takes the calls of machine.PWM that the firmware makes (freq, duty_u16, deinit),
    with ESP32 limits: 1 Hz to 40 MHz, duty_u16 0-65535 (ports/esp32/machine_pwm.c).
    """

    def __init__(self, clock, name, freq=5000, duty_u16=0):
        self.clock = clock
        self.name = name
        self._freq = freq
        self._duty = duty_u16
        self.changes = []

    def freq(self, hz=None):
        return self._setting("_freq", hz, 1, 40000000, "frequency must be from 1Hz to 40MHz")

    def duty_u16(self, duty=None):
        return self._setting("_duty", duty, 0, 65535, "duty_u16 must be from 0 to 65535")

    def _setting(self, name, value, low, high, refusal):
        """The setting `name` (None: read it), checked as the port checks it; a change is
        noted."""
        if value is None:
            return getattr(self, name)
        if not low <= value <= high:
            raise ValueError(refusal)
        if value != getattr(self, name):
            setattr(self, name, value)
            self._note()
        return None

    def deinit(self):
        self.duty_u16(0)

    def _note(self):
        self.changes.append((self.clock(), self._freq, self._duty))

    def tones(self):
        return decode_tones(self.changes)

    def heard(self):
        from boardlib import calls

        return [calls.NAMES[c] for c in match_calls(self.tones())]


def decode_tones(changes):
    """What was heard, from PWM changes [(ms, Hz, duty), ...] in time order: a list of
    (start ms, Hz, ms) tones, each a span with the duty above 0 at one frequency."""
    tones = []
    sounding = None  # (start, Hz) of the tone sounding now
    for at, freq, duty in changes:
        if sounding is not None and (not duty or freq != sounding[1]):
            if at > sounding[0]:
                tones.append((sounding[0], sounding[1], at - sounding[0]))
            sounding = None
        if duty and sounding is None:
            sounding = (at, freq)
    return tones


def match_calls(tones, slack_ms=10):
    """The boardlib.calls calls that `tones` play, in order (calls.NONE for tones that are
    no call): each call's sounding steps, in pitch and length within `slack_ms`."""
    from boardlib import calls

    wanted = []
    for call in range(1, len(calls.PATTERNS)):
        p = calls.PATTERNS[call]
        wanted.append((call, [(p[i], p[i + 1]) for i in range(0, len(p), 2) if p[i]]))
    found = []
    i = 0
    while i < len(tones):
        for call, want in wanted:
            got = tones[i:i + len(want)]
            if len(got) == len(want) and all(  # (no zip(strict=) on MicroPython)
                    want[k][0] == got[k][1] and abs(want[k][1] - got[k][2]) <= slack_ms
                    for k in range(len(want))):
                found.append(call)
                i += len(want)
                break
        else:
            found.append(calls.NONE)
            i += 1
    return found
