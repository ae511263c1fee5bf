"""The ESP32 twin, host side: a simulated board reached over a USB-serial pty, like a real one.

    from tools.sim.board.twin import Twin
    twin = Twin("state-dir", version="1.24.1")   # powers up: boot.py, then main.py
    twin.usb_path                     # "/dev/pts/7": mpremote connect /dev/pts/7 ...
    twin.set_spot(3, standing=False)  # a pin falls on spot 3
    twin.set_button("undo", True)     # undo held down
    twin.wait_display(lambda text: "0" in text)
    twin.power_cycle()                # power off and on (the flash keeps its files)
    twin.close()

    radio = Radio(latency_ms=150, backpressure=True)        # tools/sim/board/radio.py
    twin = Twin("state-dir", version="1.23.0", radio=radio,  # the club's WiFi in reach
                interpreter="release", heap="esp32")        # 1.23's own, its 32-bit heap
    twin.set_wifi(False)              # the access point goes away (and back: True)
    Twin(state, radio=radio, wifi=False)  # ... or is away from power-up

The flash takes the time a real chip takes to erase and program (`flash`: "typical", the
default, "max" for the datasheet's maximum, a worn or hot chip, or "none";
tools/sim/board/flash.py), in real time: the chip runs nothing meanwhile, and the watchdog
keeps counting.

The release played (`version`) is one of tools/sim/board/esp32/releases.py: the chip takes
away and renames what it lacks, and finds the Python modules its stock build freezes
(umqtt, ...) in `.frozen` before /lib: the folder tools/sim/board/portfrozen.py made for
it, or, where none was made, micropython-lib's umqtt.simple 1.3.4 of `make venv` alone
(`umqtt_source` says which). `interpreter`: "pinned" (the venv's, the default), "release"
(the unix port of that release from ../shared/upy or build/upy, 32-bit first, else the
pinned one: `interpreter_path` says which ran) or a path. `heap`: None (the unix port's
own), "esp32" (the GC heap the release has on an ESP32 without PSRAM, releases.gc_heap,
with `idf_left` bytes of ESP-IDF heap for WiFi and TLS: played on a 32-bit interpreter
only, `heap_note` says when it was not; on one built with `upybuild --esp32-heap` the heap
grows from 56 KB into the ESP-IDF's regions as the ESP32's does, WiFi and TLS taking from
the same regions: `heap_grows`, `heap_areas()`) or a number of bytes.

`python -m tools.sim --state DIR --usb` runs one from the command line. A board flashed
with a frozen build (tools/sim/board/frozen.py, `--frozen`) runs it at every boot until it
is flashed with a stock MicroPython again.

The chip is the real MicroPython interpreter (the unix port) running
tools/sim/board/esp32/rom.py, one process per boot. This side is what is outside the
chip: the USB-serial bridge (bytes both ways at `baud`, dropped when nobody reads, lost
while the chip resets), the reset line (machine.reset() and the watchdog restart the
chip, keeping the flash image), the task watchdog (once armed it is never stopped: a
soft reset keeps it running, ports/esp32/machine_wdt.c), and the switches under the
spots and buttons. Ctrl-C (0x03) from the host interrupts the chip only while its
interrupt character is on, as the ESP32's UART driver does; otherwise it is a byte.
"""

import hashlib
import os
import pty
import select
import signal
import subprocess
import threading
import time
import tty

from boardlib.shot import BUTTON_NAMES
from firmware.boards import esp32_devkit as profile
from tools.port import upy
from tools.sim.board import frozen, frozenrom, portfrozen
from tools.sim.board.esp32 import releases
from tools.sim.board.flash import TIMINGS

ROM = upy.entry("rom")
BUTTONS = BUTTON_NAMES
WDT_TEXT = (b"E (%d) task_wdt: Task watchdog got triggered. The following tasks/users did "
            b"not reset the watchdog in time:\r\nE (%d) task_wdt:  - mpy_machine_wdt\r\n")


def _sigint_caught(pid):
    """True when the process handles SIGINT (MicroPython's interrupt character is on)."""
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("SigCgt:"):
                    return bool(int(line.split()[1], 16) & (1 << (signal.SIGINT - 1)))
    except OSError:
        pass
    return False


def port_modules_place(interpreter):
    """Where the twin on the 32-bit port `interpreter` keeps the modules a stock ESP32 build
    freezes (umqtt) when it plays the board's heap: "rom", a ROMFS image (VfsRom, from
    1.25); "frozen", frozen in the port (tools.port.upybuild does so before 1.25); or
    "heap", their .mpy files loaded into the heap, harsher than the board, which keeps
    their code in flash (frozenrom.compiled_tree)."""
    if upy.has_vfs_rom(interpreter):
        return "rom"
    return "frozen" if upy.has_frozen_umqtt(interpreter) else "heap"


class Twin:
    def __init__(self, state_dir, version="1.24.1", line_nf=10, ticks_start=0,
                 display="tm1637", baud=115200, link_path=None, heapsize="4M",
                 standing_level=profile.SPOT_STANDING_LEVEL, inputs=None, on_event=None,
                 radio=None, interpreter="pinned", heap=None, idf_left=None,
                 flash="typical", wifi=True):
        self.state_dir = os.path.abspath(state_dir)
        if flash not in TIMINGS:
            raise ValueError("flash: one of %s" % ", ".join(sorted(TIMINGS)))
        self.flash_timing = flash
        self.radio = radio
        self.wifi = wifi  # the club's access point is on: it stays as it is through resets
        # machine.unique_id() in hex: Espressif's prefix, then this board's own
        self.chip_id = "240ac4" + hashlib.sha256(self.state_dir.encode()).hexdigest()[:6]
        self.release = releases.parse(version)
        self.interpreter_path = self._interpreter(interpreter)
        self.heap_note = ""
        self.gc_heap = 0
        self.frozen_in_heap = self.port_in_interpreter = False
        self.idf_left = None
        self.heap_grows = False
        self.heap_said = None  # the chip's last report of its growing heap (heap_areas)
        if heap is not None:
            if self.interpreter_path is None or not upy.is_32bit(self.interpreter_path):
                self.heap_note = ("the ESP32's heap is played on a 32-bit interpreter only: "
                                  "the unix port's heap was used")
            else:
                self.gc_heap = (releases.gc_heap(self.release) if heap == "esp32"
                                else int(heap))
                self.idf_left = releases.IDF_LEFT
                # the heap as it grows, where the interpreter can (`upybuild --esp32-heap`)
                self.heap_grows = (heap == "esp32" and releases.row(self.release)["heap"][0]
                                   == "grows" and upy.has_growing_heap(self.interpreter_path))
                place = port_modules_place(self.interpreter_path)
                self.port_in_interpreter = place == "frozen"
                self.frozen_in_heap = place == "heap"
        if idf_left is not None:
            self.idf_left = idf_left  # the ESP-IDF heap for WiFi and TLS, on any interpreter
        self.port_frozen = portfrozen.folder(self.release)
        if self.port_frozen is not None:
            self.umqtt_source = "umqtt.simple %s, frozen in MicroPython %s" % (
                releases.row(self.release)["umqtt"], version)
        else:
            self.port_frozen = upy.UPYLIB
            self.umqtt_source = ("umqtt.simple 1.3.4 of make venv (no frozen modules of %s "
                                 "were made: python -m tools.sim.board.portfrozen)" % version)
        if self.port_in_interpreter:
            self.umqtt_source = ("umqtt.simple frozen in %s"
                                 % os.path.basename(self.interpreter_path))
        os.makedirs(self.state_dir, exist_ok=True)
        self.version = version
        self.line_nf = line_nf
        self.ticks_start = ticks_start
        self.display_kind = display
        self.baud = baud
        self.link_path = link_path
        self.heapsize = heapsize
        self.standing_level = standing_level
        self.on_event = on_event  # called with ("display", text) or ("reset", cause)
        self.inputs = {}
        for gpio in profile.SPOTS:
            self.inputs[gpio] = standing_level  # every pin standing at power-up
        for gpio in profile.BUTTONS.values():
            self.inputs[gpio] = 1
        self.inputs.update(inputs or {})
        self.display = ""
        self.displays = []
        self.resets = []
        self.output = bytearray()  # everything the chip wrote to the serial port
        self.wdt_ms = None
        self.wdt_fed = 0.0
        self._lock = threading.RLock()
        self._proc = None
        self._resetting = None  # the chip that asked for a reset: its UART is deaf
        self._ctl = None
        self._last_sigint = 0.0
        self._running = None  # the chip whose MicroPython has started (its "U" event)
        self._closed = False
        self._master, self._slave = pty.openpty()
        tty.setraw(self._master)
        tty.setraw(self._slave)
        os.set_blocking(self._master, False)
        self.usb_path = os.ttyname(self._slave)
        self._hard_reset_at = time.monotonic()
        self._boot("PWR", "friendly")
        self._threads = [threading.Thread(target=f, daemon=True)
                         for f in (self._from_host, self._watchdog)]
        for t in self._threads:
            t.start()

    def _interpreter(self, choice):
        if choice == "pinned":
            return None
        if choice == "release":
            return upy.release_binary(self.release)
        return choice

    # -- the table -------------------------------------------------------------------------

    def set_wifi(self, up):
        """The club's access point comes back (True) or goes away (False)."""
        with self._lock:
            self.wifi = bool(up)
            self._send_ctl("N %d\n" % (1 if up else 0))

    def set_spot(self, spot, standing):
        level = self.standing_level if standing else 1 - self.standing_level
        self._set_input(profile.SPOTS[spot - 1], level)

    def set_button(self, name, pressed):
        self._set_input(profile.BUTTONS[name], 0 if pressed else 1)

    def press(self, name, seconds=0.15):
        self.set_button(name, True)
        time.sleep(seconds)
        self.set_button(name, False)

    def _set_input(self, gpio, level):
        with self._lock:
            self.inputs[gpio] = level
            # stamped with the host's clock: the chip makes changes that reach it together
            # as far apart as they were made here (esp32/hardware.py, poll_host)
            self._send_ctl("P %d %d %d\n" % (gpio, level, time.monotonic() * 1000))

    def _send_ctl(self, line):
        if self._ctl is not None:
            try:
                os.write(self._ctl[0], line.encode())
            except OSError:
                pass  # the chip is resetting; it starts with self.inputs

    def heap_areas(self, timeout=10.0):
        """A growing heap's state, asked of the chip (it answers when the firmware next
        reads its inputs): ([pool bytes of each area the GC heap has grown by, the first
        first], [free bytes of each ESP-IDF region, in address order])."""
        if not self.heap_grows:
            raise ValueError("this twin's heap does not grow (heap_grows)")
        self.heap_said = None
        self._send_ctl("H\n")
        deadline = time.monotonic() + timeout
        while self.heap_said is None:
            if time.monotonic() > deadline:
                raise TimeoutError("the chip did not report its heap")
            time.sleep(0.02)
        areas, regions = self.heap_said.split()
        return ([int(a) for a in areas.split(",") if a != "-"],
                [int(r) for r in regions.split(",")])

    # -- waiting ---------------------------------------------------------------------------

    def wait_display(self, pred, timeout=30.0, since=None):
        """Wait until pred(display text) holds; returns the text (raises on timeout).

        since: a length of `displays`: only a picture shown after that counts (the chips
        keep showing the last one through a reset)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            text = self.display
            if pred(text) and (since is None or len(self.displays) > since):
                return text
            time.sleep(0.02)
        raise TimeoutError("display shows %r; history %r" % (self.display, self.displays[-8:]))

    def wait_output(self, text, timeout=30.0, start=0):
        deadline = time.monotonic() + timeout
        needle = text.encode()
        while time.monotonic() < deadline:
            if needle in self.output[start:]:
                return True
            time.sleep(0.02)
        raise TimeoutError("no %r in %r" % (text, bytes(self.output[-400:])))

    def wait_resets(self, count, timeout=30.0):
        """Wait until the chip has started `count` times; returns `resets` (their causes).
        A reset's message comes before the chip starts again: wait for this, not for it."""
        deadline = time.monotonic() + timeout
        while len(self.resets) < count:
            if time.monotonic() >= deadline:
                raise TimeoutError("%d starts, not %d: %r" % (len(self.resets), count,
                                                              self.resets))
            time.sleep(0.02)
        return list(self.resets)

    # -- power and resets ------------------------------------------------------------------

    def power_cycle(self):
        with self._lock:
            self._stop_chip()
            self._boot("PWR", "friendly")

    def close(self):
        self._closed = True
        with self._lock:
            self._stop_chip()
        # The threads go before the pty's descriptors: a thread still at os.read() on a
        # closed number would read from whatever file the process opens next under it.
        for t in self._threads:
            t.join(timeout=5)
        for fd in (self._master, self._slave):
            try:
                os.close(fd)
            except OSError:
                pass

    def _stop_chip(self):
        proc = self._proc
        if proc is None:
            return
        self._proc = None
        proc.kill()
        proc.wait()
        for t in self._chip_threads:
            t.join(timeout=5)
        for fd in self._ctl:
            try:
                os.close(fd)
            except OSError:
                pass
        self._ctl = None

    def _boot(self, cause, mode):
        now = time.monotonic()
        if cause != "SOFT":
            self._hard_reset_at = now
            self.wdt_ms = None  # a hard reset stops the task watchdog
        self.resets.append(cause)
        if self.on_event:
            self.on_event("reset", cause)
        uptime_ms = int((now - self._hard_reset_at) * 1000)
        to_chip_r, to_chip_w = os.pipe()
        from_chip_r, from_chip_w = os.pipe()
        inputs = ",".join("%d=%d" % kv for kv in sorted(self.inputs.items()))
        args = [ROM, "--state", self.state_dir, "--cause", cause, "--mode", mode,
                "--version", self.version, "--ticks-start", str(self.ticks_start),
                "--uptime-ms", str(uptime_ms), "--display", self.display_kind,
                "--line-nf", str(self.line_nf), "--inputs", inputs,
                "--ctl-in", str(to_chip_r), "--ctl-out", str(from_chip_w)]
        if self.link_path:
            args += ["--link", self.link_path]
        if frozen.is_frozen(self.state_dir):  # the firmware it was flashed with
            args += ["--frozen", frozen.folder(self.state_dir)]
        port_frozen = self.port_frozen
        if self.gc_heap:
            args += ["--heap", str(self.gc_heap)]
            if self.heap_grows:
                args += ["--heap-grows", "1"]
            if self.port_in_interpreter:
                port_frozen = None
            elif self.frozen_in_heap:  # bytecode in the heap, which the board keeps in flash
                port_frozen = frozenrom.compiled_tree(
                    self.port_frozen, os.path.join(self.state_dir, "port-mpy"))
            else:
                # the port's frozen modules as the board holds them: code outside the heap
                args += ["--port-rom", frozenrom.compiled_image(
                    self.port_frozen, os.path.join(self.state_dir, "port.romfs"))]
        if port_frozen is not None:
            args += ["--port-frozen", port_frozen]
        args += ["--unique-id", self.chip_id[6:], "--flash-timing", self.flash_timing]
        if self.radio is not None:
            args += ["--radio", self.radio.chip_config(), "--wifi", "1" if self.wifi else "0"]
        if self.idf_left is not None:
            args += ["--idf-left", str(self.idf_left)]
        proc = upy.popen(args, heapsize=self.heapsize, interpreter=self.interpreter_path,
                         stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         pass_fds=(to_chip_r, from_chip_w), bufsize=0)
        os.close(to_chip_r)
        os.close(from_chip_w)
        self._proc = proc
        self._ctl = (to_chip_w, from_chip_r)
        self._chip_threads = [
            threading.Thread(target=self._to_host, args=(proc,), daemon=True),
            threading.Thread(target=self._events, args=(proc, from_chip_r), daemon=True),
        ]
        for t in self._chip_threads:
            t.start()

    def _reset(self, cause, mode="friendly", text=b""):
        with self._lock:
            self._stop_chip()  # its last output reaches the host first
            if text:
                self._serial_out(text)
            if not self._closed:
                self._boot(cause, mode)

    # -- the USB-serial bridge -------------------------------------------------------------

    def _pace(self, n):
        time.sleep(n * 10.0 / self.baud)  # 8N1: ten bits a byte

    def _serial_out(self, data):
        self.output += data
        try:
            os.write(self._master, data)
        except OSError:
            pass  # nobody reading and the buffer full: the bytes are gone, as on a board

    def _to_host(self, proc):
        out = proc.stdout
        while True:
            data = out.read(256)
            if not data:
                return
            self._pace(len(data))
            self._serial_out(data)

    def _from_host(self):
        while not self._closed:
            try:
                ready, _, _ = select.select([self._master], [], [], 0.1)
                if not ready:
                    continue
                data = os.read(self._master, 256)
            except OSError:
                time.sleep(0.05)
                continue
            self._pace(len(data))
            with self._lock:
                self._to_chip(data)

    def _to_chip(self, data):
        proc = self._proc
        if proc is None or proc is self._resetting:
            return  # the chip is in reset: the UART is not listening
        start = 0
        for i, byte in enumerate(data):
            # Ctrl-C interrupts only a MicroPython that has started and listens for it;
            # before, the process is the interpreter starting up (whose own SIGINT
            # handler is no MicroPython's) and the byte is data, held as a UART holds it
            if byte == 3 and proc is self._running and _sigint_caught(proc.pid):
                self._write_chip(proc, data[start:i])
                start = i + 1
                now = time.monotonic()
                if now - self._last_sigint > 0.2:  # one pending interrupt at a time
                    self._last_sigint = now
                    proc.send_signal(signal.SIGINT)
        self._write_chip(proc, data[start:])

    def _write_chip(self, proc, data):
        if data:
            try:
                proc.stdin.write(data)
            except (OSError, ValueError):
                pass

    # -- events from the chip --------------------------------------------------------------

    def _events(self, proc, fd):
        buf = b""
        while True:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                return
            if not chunk:
                return
            buf += chunk
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                if self._event(proc, line.decode()):
                    return

    def _event(self, proc, line):
        kind, _, arg = line.partition(" ")
        if kind == "U":
            self._running = proc
        elif kind == "F":
            self.wdt_fed = time.monotonic()
        elif kind == "W":
            self.wdt_ms = int(arg)
            self.wdt_fed = time.monotonic()
        elif kind == "D":
            self.display = arg.replace("_", " ")
            self.displays.append(self.display)
            if self.on_event:
                self.on_event("display", self.display)
        elif kind == "H":
            self.heap_said = arg
        elif kind == "R":
            self._resetting = proc
            parts = arg.split()
            cause = "HARD" if parts[0] == "HARD" else "SOFT"
            mode = parts[1] if len(parts) > 1 else "friendly"
            threading.Thread(target=self._reset_from, args=(proc, cause, mode),
                             daemon=True).start()
            return True
        return False

    def _reset_from(self, proc, cause, mode):
        with self._lock:
            if self._proc is proc:  # not already reset by the watchdog
                self._reset(cause, mode)

    def _watchdog(self):
        while not self._closed:
            time.sleep(0.01)
            ms = self.wdt_ms
            if ms is None or self._proc is None:
                continue
            with self._lock:
                if self.wdt_ms is None or time.monotonic() - self.wdt_fed <= ms / 1000.0:
                    continue
                at = int((time.monotonic() - self._hard_reset_at) * 1000)
                self._reset("WDT", text=WDT_TEXT % (at, at))
