"""The bench's stand-ins for what is C on the ESP32 (tools.sim.board.bench_device): a link
that sinks its bytes, a flash whose calls are counted, the display's bus and the inputs at
C speed, emulators kept quiet, so that the counted windows hold the firmware's own work.
"""





class SinkStream:
    """The host end of the serial link: swallows frames, sends no commands.

    Counting allocates nothing; `largest` is the longest frame written.
    """

    def __init__(self):
        self.bytes = 0
        self.frames = 0
        self.largest = 0

    def write(self, buf):
        n = len(buf)
        self.bytes += n
        self.frames += 1
        if n > self.largest:
            self.largest = n
        return n

    def readinto(self, buf):
        return None

    any = bool  # any() in C, as machine.UART.any is: nothing has arrived


class CSink:
    """The host end of the serial link at C speed, as machine.UART's write() is on the
    ESP32: write() is a builtin (len: the bytes taken), any() says nothing has arrived.
    The counted runs use it; SinkStream's write() is Python, a few thousand instructions a
    frame that the board's UART does not cost (the runs that report frames keep it)."""

    any = bool

    def __init__(self):
        self.write = len  # (on the instance: a builtin in a class would bind as a method)

    def readinto(self, buf):
        return None


# Calls of LeanFlash's readblocks, writeblocks and ioctl: on the ESP32 each is a call into
# C (esp32.Partition), here a Python method; tools.bench takes what the difference costs
# out of the counts (the `clock` mode measures it), as it does for the clock's stand-ins.
FLASH_CALLS = [0, 0, 0]


class LeanFlash:
    """The thinnest block device the unix port allows: one Python call per block
    operation, which on the ESP32 is a call into C (esp32.Partition). The bytes live in
    a file, not in the heap, so the heap is the size a board has and the allocator
    searches it as it would there. littlefs itself is C on both; its work is counted."""

    def __init__(self, path, blocks=384, block_size=4096, image=None):
        self.block_size = block_size
        self.blocks = blocks
        self.blank = b"\xff" * block_size
        with open(path, "wb") as f:
            source = open(image, "rb") if image else None
            for _ in range(blocks):
                f.write(source.read(block_size) if source else self.blank)
            if source:
                source.close()
        self.formatted = image is not None
        self.file = open(path, "r+b")

    def readblocks(self, block, buf, offset=0):
        FLASH_CALLS[0] += 1
        self.file.seek(block * self.block_size + offset)
        self.file.readinto(buf)

    def writeblocks(self, block, buf, offset=None):
        FLASH_CALLS[1] += 1
        self.file.seek(block * self.block_size + (offset or 0))
        self.file.write(buf)

    def is_blank(self):
        return not self.formatted  # made blank above (mount() formats it), or a copy

    def ioctl(self, op, arg):
        FLASH_CALLS[2] += 1
        if op == 4:
            return self.blocks
        if op == 5:
            return self.block_size
        if op == 6:  # erase
            self.file.seek(arg * self.block_size)
            self.file.write(self.blank)
        return 0


class CBus:
    """A TM1637's bus whose start(), stop() and write() are each one call into C, as
    machine.SoftI2C's are on the ESP32 (its bit-banging is C there, not counted here):
    every byte is acknowledged."""

    start = bool
    stop = bool

    def __init__(self):
        self.write = len  # (on the instance: a builtin in a class would bind as a method)


def _c_speed_display(sim):
    from boardlib.display import Display
    from boardlib.tm1637 import TM1637

    sim.board.display = Display.tm1637(TM1637(CBus()), TM1637(CBus()))


class CInput:
    """An input pin read in C: value() is a bytearray's isdigit, "1" reads high and "x"
    low, as cheap as reading a machine.Pin on the ESP32; the bench sets the byte, and a
    change calls the interrupt handler (handler(pin), as machine.Pin.irq's)."""

    IRQ_RISING = 1
    IRQ_FALLING = 2

    def __init__(self, level):
        self.level = bytearray(b"1" if level else b"x")
        self.value = self.level.isdigit
        self.handler = None

    def irq(self, handler=None, trigger=3):
        self.handler = handler

    def set(self, level):
        byte = 0x31 if level else 0x78
        if self.level[0] != byte:
            self.level[0] = byte
            if self.handler is not None:
                self.handler(self)


def _c_speed_inputs(sim):
    """The board reads its spots and buttons through the firmware's own Board code, from
    pins as cheap as the ESP32's; the table's setters drive them."""
    board = sim.board
    board.spots = [CInput(pin.value()) for pin in board.spots]
    board.buttons = [CInput(pin.value()) for pin in board.buttons]
    board.bind_pins()
    level = board.standing_level

    def set_spot(spot, standing):
        board.spots[spot - 1].set(level if standing else 1 - level)

    def set_button(index, pressed):
        board.buttons[index].set(0 if pressed else 1)

    sim.set_spot = set_spot
    sim.set_button = set_button


def _quiet_emulators(sim):
    """Detach the chip emulators: the board has real chips, their decoding is not its cost."""
    for chip in sim.chips:
        for name in ("clk", "dio", "din", "cs"):
            pin = getattr(chip, name, None)
            if pin is not None and hasattr(pin, "_listeners"):
                pin._listeners = []
