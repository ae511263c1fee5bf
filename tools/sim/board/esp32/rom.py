"""The twin's chip: boots the board as the ESP32 port does and runs its REPL.

    micropython tools/sim/board/esp32/rom.py --state DIR [--cause PWR|HARD|WDT|SOFT]
        [--mode friendly|raw] [--version 1.24.1] [--ticks-start MS] [--uptime-ms MS]
        [--display tm1637|max7219] [--line-nf N] [--inputs GPIO=LEVEL,...]
        [--ctl-in FD --ctl-out FD] [--link PTY] [--frozen DIR] [--port-frozen DIR]
        [--port-rom FILE] [--radio FILE] [--heap BYTES] [--heap-grows 1] [--idf-left BYTES]
        [--flash-timing typical|max|none]

Started by tools.sim.board.twin (the host side), once per boot: a soft or hard reset ends
this process and the host starts the next. Follows ports/esp32/main.c: the board's
filesystem (the littlefs image in DIR) is the root and sys.path is ['', '.frozen',
'/lib']; `boot.py` runs, then `main.py` only when the REPL is in friendly mode and boot.py
did not fail; then the REPL. The REPL follows shared/runtime/pyexec.c: raw mode (Ctrl-A;
Ctrl-D alone is a soft reset that stays in raw mode, so main.py does not run), friendly
mode (Ctrl-B; Ctrl-D is a soft reset that runs main.py), Ctrl-C interrupts running code
only while the interrupt character is on (it is while code runs, unless the code turned
it off with micropython.kbd_intr(-1)).

--frozen DIR: the board runs a frozen build (tools/sim/board/frozen.py made DIR). DIR is
read-only at /.frozen, outside the flash filesystem (vfs.TwinVfs.overlay), and sys.path is
['', '/.frozen', '.frozen', '/lib']: the build's modules come where the ESP32 has
'.frozen', after the filesystem; '.frozen' after it is the unix port's own frozen modules
(asyncio), which the ESP32 build has in the same place. A frozen `boot.py` or `main.py`
runs instead of the filesystem's (shared/runtime/pyexec.c, `pyexec_file_if_exists`).

--version X.Y.Z plays that release (tools/sim/board/esp32/releases.py): what it lacks is
taken away (an import of a module it does not have fails, `next()` takes no default before
1.25, `machine.WDT` rounds down to seconds on 1.20), what it names differently is renamed
(`ssl`/`tls`, `uasyncio`), and its `network`, `socket` and TLS modules are the twin's
(espnet.py). --port-frozen DIR: the Python modules a stock build of that release freezes
(umqtt and the rest, tools/sim/board/portfrozen.py), read-only at /.port, which
sys.path has where the ESP32 has `.frozen`: before /lib. --port-rom FILE: the same modules
compiled, in a ROMFS image (tools/sim/board/frozenrom.py) mounted at /.port, whose bytecode
runs where it lies, as a frozen module's does: the twin gives it when it plays the board's
heap, which a frozen module's code is not in. --radio FILE: the club's WiFi
(tools/sim/board/radio.py); without it no access point is in reach; --wifi 0: its access
point is off at power-up (the host's `N 1` brings it). --heap BYTES: the GC
heap the board has (the twin's own modules are not counted: a ballast takes the rest of
the unix port's heap); --heap-grows 1 (an interpreter built with `upybuild --esp32-heap`):
that heap is the ESP32's first area, which grows into the ESP-IDF's regions as the ESP32's
does, WiFi and TLS taking theirs from the same regions (releases.FIRST_AREA, IDF_BELOW,
IDF_ABOVE); --idf-left BYTES: otherwise, what the ESP-IDF heap has for WiFi and TLS.
--flash-timing: how long the flash takes to erase a sector and program a page
(tools/sim/board/flash.py TIMINGS; typical by default): the chip waits that long, in real
time, running nothing, as an ESP32 does while its flash is busy.
"""

import os
import sys

import micropython

CTRL_A, CTRL_B, CTRL_C, CTRL_D, CTRL_E = 1, 2, 3, 4, 5
ROM_TEXT = {
    "PWR": "rst:0x1 (POWERON_RESET),boot:0x13 (SPI_FAST_FLASH_BOOT)",
    "HARD": "rst:0xc (SW_CPU_RESET),boot:0x13 (SPI_FAST_FLASH_BOOT)",
    "WDT": "rst:0xc (SW_CPU_RESET),boot:0x13 (SPI_FAST_FLASH_BOOT)",
}
PROJECT = ("boardlib", "rules_core", "firmware", "tools")
FROZEN_MOUNT = "/.frozen"
PORT_MOUNT = "/.port"


def parse(argv):
    opts = {"--state": None, "--cause": "PWR", "--mode": "friendly", "--version": "1.24.1",
            "--ticks-start": "0", "--uptime-ms": "0", "--display": "tm1637",
            "--line-nf": "10", "--inputs": "", "--ctl-in": None, "--ctl-out": None,
            "--link": None, "--frozen": None, "--port-frozen": None, "--port-rom": None,
            "--radio": None,
            "--heap": "0", "--heap-grows": "0", "--idf-left": None, "--unique-id": None,
            "--flash-timing": "typical", "--wifi": "1"}
    for i in range(0, len(argv) - 1, 2):
        if argv[i] not in opts:
            raise SystemExit("rom: unknown option " + argv[i])
        opts[argv[i]] = argv[i + 1]
    return opts


class Console:
    """Bytes in and out of the USB-serial port (this process's stdin and stdout)."""

    def __init__(self, idle=None):
        self.rx = sys.stdin.buffer
        self.tx = sys.stdout.buffer
        self.idle = idle  # called before waiting for a byte (the display lines settle)

    def read(self):
        if self.idle is not None:
            self.idle()
        while True:
            try:
                b = self.rx.read(1)
            except KeyboardInterrupt:  # a Ctrl-C that arrived as a signal
                return CTRL_C
            if not b:
                raise SystemExit(0)  # the host went away
            return b[0]

    def write(self, text):
        self.tx.write(text.encode() if isinstance(text, str) else text)


class Chip:
    def __init__(self, opts, hardware, esptime):
        self.mode = opts["--mode"]
        self.hardware = hardware
        self.esptime = esptime
        self.console = Console(hardware.settle)
        self.globals = {"__name__": "__main__"}
        self.frozen = opts["--frozen"] and FROZEN_MOUNT

    # -- running code ---------------------------------------------------------------------

    def execute(self, source, filename, single=False, raw=False):
        """pyexec's parse_compile_execute: 1 done, 0 exception, -1 SystemExit (soft reset).

        raw: the raw REPL's framing, output then 0x04, the error then 0x04."""
        ret = self._execute(source, filename, single, raw)
        if raw and ret != 0:
            self.console.write("\x04\x04")
        return ret

    def _execute(self, source, filename, single, raw):
        micropython.kbd_intr(CTRL_C)
        try:
            try:
                if single:
                    try:
                        code = compile(source, filename, "eval")
                    except SyntaxError:
                        code = None
                    if code is not None:
                        value = eval(code, self.globals)
                        if value is not None:
                            print(repr(value))
                        return 1
                exec(compile(source, filename, "exec"), self.globals)
                return 1
            finally:
                micropython.kbd_intr(-1)
        except SystemExit:
            return -1
        except BaseException as exc:  # noqa: B036 - the REPL shows every error
            if raw:
                self.console.write("\x04")
            sys.print_exception(exc)
            if raw:
                self.console.write("\x04")
            return 0

    def run_file(self, path):
        """pyexec_file_if_exists: a frozen script of that name first, then the file."""
        for where in [self.frozen + "/" + path, path] if self.frozen else [path]:
            try:
                with open(where) as f:
                    source = f.read()
            except OSError:
                continue
            return self.execute(source, path)
        return 1  # no file is not an error

    # -- the REPLs ------------------------------------------------------------------------

    def raw_repl(self):
        con = self.console
        con.write("raw REPL; CTRL-B to exit\r\n")
        while True:
            con.write(">")
            line = bytearray()
            while True:
                c = con.read()
                if c == CTRL_A:
                    if len(line) == 2 and line[0] == CTRL_E:
                        if line[1] != ord("A"):
                            con.write(b"R\x00")
                        elif self.raw_paste() < 0:
                            return -1
                        con.write(">")
                        line = bytearray()
                        continue
                    con.write("raw REPL; CTRL-B to exit\r\n>")
                    line = bytearray()
                elif c == CTRL_B:
                    con.write("\r\n")
                    self.mode = "friendly"
                    return 0
                elif c == CTRL_C:
                    line = bytearray()
                elif c == CTRL_D:
                    break
                else:
                    line.append(c)
            con.write("OK")
            if not line:
                con.write("\r\n")
                return -1  # soft reset, still in raw mode
            ret = self.execute(bytes(line).decode(), "<stdin>", raw=True)
            if ret < 0:
                return -1

    def raw_paste(self):
        """pyexec's do_reader_stdin: flow-controlled raw paste, a window of 128 bytes
        (MICROPY_REPL_STDIN_BUFFER_MAX 256 / 2), 0x01 for every window consumed."""
        con = self.console
        window = 128
        con.write(b"R\x01" + bytes((window & 0xFF, window >> 8)) + b"\x01")
        data = bytearray()
        used = 0
        while True:
            c = con.read()
            if c == CTRL_D:
                con.write(b"\x04")
                break
            data.append(c)
            used += 1
            if used == window:
                used = 0
                con.write(b"\x01")
        return self.execute(bytes(data).decode(), "<stdin>", raw=True)

    def friendly_repl(self):
        con = self.console
        v = sys.modules["sys"].implementation.version
        con.write("MicroPython v%d.%d.%d on 2025-01-01; Generic ESP32 module with ESP32\r\n"
                  % v[:3])
        con.write('Type "help()" for more information.\r\n')
        while True:
            con.write(">>> ")
            line = bytearray()
            while True:
                c = con.read()
                if c == CTRL_A:
                    con.write("\r\n")
                    self.mode = "raw"
                    return 0
                if c == CTRL_B:
                    return self.friendly_repl()
                if c == CTRL_C:
                    con.write("\r\n")
                    line = None
                    break
                if c == CTRL_D:
                    if not line:
                        con.write("\r\n")
                        return -1  # soft reset: main.py runs next time
                    continue
                if c in (8, 127):
                    if line:
                        line.pop()
                        con.write("\x08 \x08")
                    continue
                if c == 13:
                    con.write("\r\n")
                    break
                if c == 10:
                    continue
                line.append(c)
                con.write(bytes((c,)))
            if not line:
                continue
            if self.execute(bytes(line).decode(), "<stdin>", single=True) < 0:
                return -1


def _mount_flash(state_dir, timing, hardware):
    import time  # the unix port's own (esptime replaces it later): real time

    from tools.sim.board.esp32.vfs import TwinVfs
    from tools.sim.board.flash import TIMINGS, FileBlockDev

    try:
        os.mkdir(state_dir)
    except OSError:
        pass
    # While the flash erases or programs, the ESP32 runs nothing (its cache is off): the
    # chip process sleeps as long, and the host's watchdog keeps counting; the switches
    # the host changed meanwhile are read as a board reads them after it.
    bdev = FileBlockDev(state_dir + "/flash.img", timing=TIMINGS[timing],
                        wait=lambda us: hardware.flash_wait(us, time.sleep_us))
    if bdev.is_blank():
        os.VfsLfs2.mkfs(bdev)
    return TwinVfs(os.VfsLfs2(bdev))


def _play(row, lacks):
    """Take away and rename what the release lacks or names differently (releases.py):
    `lacks`, the modules it does not have, and `next()`'s default."""
    import builtins

    real_import = builtins.__import__

    def release_import(name, *args):
        if name in lacks:
            raise ImportError("no module named '%s'" % name)
        return real_import(name, *args)

    if lacks:  # only where needed: a hook is given no caller's globals, and the 1.24 and
        # 1.25 unix ports then resolve a relative import against __main__ (KeyError)
        builtins.__import__ = release_import
    if not row["next2"]:
        real_next = next

        def next_without_default(iterator):  # MICROPY_PY_BUILTINS_NEXT2 off
            return real_next(iterator)

        builtins.next = next_without_default


def _heap_report():
    """The pool bytes of each area the GC heap has grown by (none: "-") and the ESP-IDF
    regions' free bytes, for the host (the twin's `heap_areas`)."""
    import idfheap

    return "%s %s" % (",".join(str(a[1]) for a in idfheap.areas()[1:]) or "-",
                      ",".join(str(r[1]) for r in idfheap.info()))


def main(argv):
    # Nothing interrupts the chip's own start-up (the flash is mounted, and on a blank one
    # formatted, which takes the flash's time): a Ctrl-C meanwhile is a byte for the REPL.
    micropython.kbd_intr(-1)
    opts = parse(argv)
    version = tuple(int(x) for x in opts["--version"].split(".")) + ("",)
    from tools.sim.board.esp32 import (
        espasyncio,
        espnet,
        espselect,
        espsys,
        esptime,
        machine,
        releases,
    )
    from tools.sim.board.esp32.hardware import Hardware
    from tools.sim.board.heap import own_qstr_pool, pin

    row = releases.row(version) or releases.ROWS[-1]
    lacks = espnet.hidden(row)
    inputs = {}
    for item in opts["--inputs"].split(","):
        if item:
            gpio, level = item.split("=")
            inputs[int(gpio)] = int(level)
    ctl_in = open("/dev/fd/" + opts["--ctl-in"], "rb") if opts["--ctl-in"] else None
    ctl_out = open("/dev/fd/" + opts["--ctl-out"], "wb") if opts["--ctl-out"] else None
    esptime.configure(int(opts["--ticks-start"]), int(opts["--uptime-ms"]))
    hardware = Hardware(opts["--display"], float(opts["--line-nf"]), inputs, ctl_in, ctl_out,
                        opts["--link"], esptime.uptime_us)
    hardware.radio_switch = espnet.set_up
    # MicroPython runs and takes Ctrl-C itself from here: before, the twin's interrupt
    # would hit the interpreter's start-up (a board's UART only holds the byte meanwhile)
    hardware.send("U")
    esptime.idle = hardware.settle
    port_rom = None
    if opts["--port-rom"]:  # read while the host's files are still the root
        with open(opts["--port-rom"], "rb") as f:
            port_rom = f.read()
    vfs = _mount_flash(opts["--state"], opts["--flash-timing"], hardware)
    vfs.version = version
    chip_id = opts["--unique-id"]
    machine.attach(hardware, opts["--cause"], row,
                   bytes(int(chip_id[i:i + 2], 16) for i in (0, 2, 4)) if chip_id else None)
    espselect.attach(hardware)
    espsys_obj = espsys.Sys(version)
    idf_left = opts["--idf-left"]
    espnet.install(sys.modules, row, opts["--radio"],
                   None if idf_left is None else int(idf_left), opts["--heap-grows"] != "0")
    espnet.set_up(opts["--wifi"] != "0")  # the access point may be away from power-up
    # What the firmware imports is the ESP32's, and nothing of this tree but what is on
    # the board's own filesystem.
    for name in list(sys.modules):
        if name.split(".")[0] in PROJECT:
            del sys.modules[name]
    sys.modules["machine"] = machine
    sys.modules["time"] = esptime
    sys.modules["utime"] = esptime
    sys.modules["select"] = espselect
    sys.modules["_asyncio"] = espasyncio
    sys.modules["sys"] = espsys_obj
    os.umount("/")
    os.mount(vfs, "/")
    os.chdir("/")
    sys.path[:] = ["", ".frozen", "/lib"]
    if opts["--port-rom"]:
        # as the ESP32 holds them: bytecode that runs where it lies, not in the heap
        import vfs as _vfs

        _vfs.mount(_vfs.VfsRom(port_rom), PORT_MOUNT)
        sys.path.insert(1, PORT_MOUNT)
    elif opts["--port-frozen"]:
        vfs.overlay(PORT_MOUNT, os.VfsPosix(opts["--port-frozen"]))
        sys.path.insert(1, PORT_MOUNT)
    if opts["--frozen"]:
        vfs.overlay(FROZEN_MOUNT, os.VfsPosix(opts["--frozen"]))
        sys.path.insert(1, FROZEN_MOUNT)
    _play(row, lacks)
    ballast = None
    if int(opts["--heap"]):
        grows = opts["--heap-grows"] != "0"
        # the firmware's names in a pool of their own, in its heap (heap.own_qstr_pool)
        ballast = pin((releases.FIRST_POOL if grows else int(opts["--heap"])) - own_qstr_pool())
        hardware.ballast = ballast  # the emulators may need a little of it
        if grows:  # the first area, then the ESP-IDF's regions it grows into
            import idfheap

            idfheap.setup(releases.FIRST_AREA, releases.IDF_BELOW, releases.IDF_ABOVE)
            hardware.heap_report = _heap_report

    chip = Chip(opts, hardware, esptime)
    con = chip.console
    if opts["--cause"] in ROM_TEXT:
        con.write("ets Jul 29 2019 12:21:46\r\n\r\n%s\r\n" % ROM_TEXT[opts["--cause"]])
    ret = chip.run_file("boot.py")
    if ret >= 0 and chip.mode == "friendly" and ret != 0:
        ret = chip.run_file("main.py")
    while ret >= 0:
        if chip.mode == "raw":
            ret = chip.raw_repl()
        else:
            ret = chip.friendly_repl()
    if hardware.host_gone:
        return
    con.write("MPY: soft reboot\r\n")
    hardware.send("R SOFT " + chip.mode)
    import time

    while not hardware.host_gone:  # the host side starts the next boot
        time.sleep_ms(100)
        hardware.poll_host()


main(sys.argv[1:])
