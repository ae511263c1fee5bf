"""The ESP32 twin behaves as the ESP32 port does where the firmware depends on it.

Each test boots a twin (tools.sim.board.twin: the real interpreter playing the chip, a pty
playing its USB-serial port) and talks to it the way a builder does, with mpremote.
"""

import os
import time

import pytest
from twin_helpers import booted, flash, mpremote, scores_shown

from tools.sim.board.esp32.espsys import mpy_of

pytestmark = [pytest.mark.long(25), pytest.mark.realtime]

PROGRAMS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "board_programs")


def program(name):
    """The text of a program in tests/board_programs/, to put on the twin's flash."""
    with open(os.path.join(PROGRAMS, name)) as f:
        return f.read()


def test_boot_runs_boot_py_then_main_py_and_ctrl_c_interrupts_it(tmp_path):
    flash(tmp_path, firmware=False, files={"boot.py": "print('boot.py runs')\n",
                                           "main.py": program("counting_main.py")})
    with booted(tmp_path) as twin:
        twin.wait_output("main.py runs, cause 1")  # PWRON_RESET
        assert twin.output.index(b"boot.py runs") < twin.output.index(b"main.py runs")
        out = mpremote(twin.usb_path, "resume", "exec", "print('n is', n)")
        assert out.returncode == 0 and "n is" in out.stdout, out.stdout + out.stderr
        twin.wait_output("KeyboardInterrupt")


def test_ctrl_c_while_the_chip_starts_is_held_not_a_crash(tmp_path):
    # A host that sends Ctrl-C while the board resets (mpremote, deploy right after their
    # own reset): a board's UART holds the byte until MicroPython runs; the twin must not
    # interrupt the interpreter's own start-up, which would kill the chip's process.
    flash(tmp_path, firmware=False, files={"main.py": program("counting_main.py")})
    with booted(tmp_path) as twin:
        twin.wait_output("main.py runs, cause 1")
        with open(twin.usb_path, "r+b", buffering=0) as port:
            for _ in range(3):
                mark = len(twin.output)
                twin.power_cycle()
                end = time.monotonic() + 1.5
                while time.monotonic() < end:  # through the whole start-up
                    port.write(b"\x03")
                    time.sleep(0.02)
                out = bytes(twin.output[mark:])
                assert b"Traceback" not in out or b"main.py" in out, out
                assert b"ets Jul 29 2019" in out and twin._proc.poll() is None, out
        out = mpremote(twin.usb_path, "exec", "print('still', 6 * 7)")
        assert out.returncode == 0 and "still 42" in out.stdout, out.stdout + out.stderr


def test_raw_soft_reset_skips_main_py_a_friendly_one_runs_it(tmp_path):
    flash(tmp_path, firmware=False, files={"main.py": program("counting_main.py")})
    with booted(tmp_path) as twin:
        twin.wait_output("main.py runs")
        out = mpremote(twin.usb_path, "soft-reset")  # mpremote's: from the raw REPL
        assert out.returncode == 0, out.stdout + out.stderr
        time.sleep(1.0)
        assert twin.resets == ["PWR", "SOFT"]
        assert twin.output.count(b"main.py runs") == 1  # not again after the raw reset
        mark = len(twin.output)
        # The friendly REPL's Ctrl-D is the soft reset that runs main.py.
        with open(twin.usb_path, "r+b", buffering=0) as port:
            port.write(b"\r\x02")
            time.sleep(0.5)
            port.write(b"\x04")
            twin.wait_output("main.py runs, cause 5", start=mark)  # SOFT_RESET


def test_machine_reset_and_watchdog_are_hard_resets_that_keep_the_flash(tmp_path):
    flash(tmp_path, firmware=False, files={"main.py": program("files_main.py")})
    with booted(tmp_path) as twin:
        twin.wait_output("cause 1")
        out = mpremote(twin.usb_path, "resume", "exec",
                       "open('kept.txt', 'w').write('x')", "+", "reset")
        assert out.returncode == 0, out.stdout + out.stderr
        twin.wait_output("cause 2 files ['kept.txt', 'main.py']")  # HARD_RESET
        out = mpremote(twin.usb_path, "resume", "exec",
                       "import machine\nmachine.WDT(timeout=1000)")
        assert out.returncode == 0, out.stdout + out.stderr
        twin.wait_output("task_wdt: Task watchdog got triggered", timeout=10)
        twin.wait_output("cause 3 files ['kept.txt', 'main.py']")  # WDT_RESET
        assert twin.resets == ["PWR", "HARD", "WDT"]


def test_an_armed_watchdog_survives_a_soft_reset_and_cannot_be_stopped(tmp_path):
    flash(tmp_path, firmware=False)
    with booted(tmp_path) as twin:
        out = mpremote(twin.usb_path, "resume", "exec",
                       "import machine\nw = machine.WDT(timeout=1500)\n"
                       "print(hasattr(w, 'deinit'), hasattr(w, 'stop'))",
                       "+", "soft-reset")
        assert out.returncode == 0 and "False False" in out.stdout, out.stdout + out.stderr
        twin.wait_output("task_wdt", timeout=10)
        assert twin.wait_resets(3, timeout=10) == ["PWR", "SOFT", "WDT"]


def test_asyncio_sleeps_end_on_10_ms_ticks_and_ticks_wrap_at_2_30(tmp_path):
    flash(tmp_path, firmware=False)
    with booted(tmp_path, ticks_start=(1 << 30) - 3000) as twin:
        out = mpremote(twin.usb_path, "resume", "run", os.path.join(PROGRAMS, "tick_sleeps.py"))
    assert out.returncode == 0, out.stdout + out.stderr
    words = out.stdout.split()
    assert int(words[1]) >= 20 * 10 - 5  # twenty 5 ms sleeps of about a tick each
    assert words[3] == "True" and words[4] == "5000"


def test_the_installed_micropython_version_is_the_one_chosen(tmp_path):
    flash(tmp_path, firmware=False)
    with booted(tmp_path, version="1.22.2") as twin:
        out = mpremote(twin.usb_path, "resume", "exec",
                       "import sys\nprint(sys.implementation.version, sys.implementation._mpy)")
    assert out.stdout.split("\n")[0].strip() == "(1, 22, 2, '') %d" % mpy_of((1, 22))
    assert mpy_of((1, 22)) & 0xFF == 6 and (mpy_of((1, 22)) >> 8) & 3 == 1


def test_sim_usb_prints_the_pty_first_and_runs_until_killed(tmp_path):
    import signal
    import subprocess
    import sys

    from tools.port import upy

    # a main.py that ends: no watchdog armed by a firmware that mpremote's Ctrl-C stopped
    # (on a loaded machine its entering the raw REPL can outlast the watchdog)
    flash(tmp_path, firmware=False, files={"main.py": "print('up')\n"})
    proc = subprocess.Popen([sys.executable, "-m", "tools.sim", "--state", str(tmp_path),
                             "--usb", "--baud", "2000000"], stdout=subprocess.PIPE, text=True,
                            cwd=upy.ROOT)
    try:
        first = proc.stdout.readline()
        assert first.startswith("usb: /dev/pts/"), first
        port = first.split()[1]
        out = mpremote(port, "resume", "exec", "import os\nprint(os.listdir())")
        assert "main.py" in out.stdout, out.stdout + out.stderr
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=20) == 0
    time.sleep(0.5)
    assert not [pid for pid in os.listdir("/proc") if pid.isdigit() and _is_chip(pid, tmp_path)]


def _is_chip(pid, state):
    try:
        with open("/proc/%s/cmdline" % pid, "rb") as f:
            args = f.read().split(b"\0")
    except OSError:
        return False
    return any(a.endswith(b"rom.py") for a in args) and str(state).encode() in args


def test_spi_for_the_max7219_leaves_gpio_19_alone(tmp_path):
    flash(tmp_path, cfg={"display": "max7219"})
    with booted(tmp_path, display="max7219") as twin:
        twin.wait_display(lambda text: "0" in text, timeout=60)
        out = mpremote(twin.usb_path, "resume", "exec",
                       "import machine\nprint(sorted(machine._board['hw'].claims.items()))")
    assert out.returncode == 0, out.stdout + out.stderr
    claims = eval(out.stdout.strip())
    assert (18, "SPI(2) sck") in claims and (23, "SPI(2) mosi") in claims
    assert 19 not in dict(claims)  # the right TM1637's CLK in the default wiring


def test_a_board_with_a_piezo_on_buzzer_pin_starts_and_drives_it(tmp_path):
    """firmware.hw makes the piezo's machine.PWM on board.cfg's buzzer_pin (the
    builder asks it for one, firmware.assemble); the board starts and plays."""
    flash(tmp_path, cfg={"buzzer_pin": 2})
    with booted(tmp_path) as twin:
        twin.wait_display(scores_shown, timeout=60)
        out = mpremote(twin.usb_path, "resume", "exec",
                       "import machine\nprint(sorted(machine._board['hw'].claims.items()))")
        assert "Err" not in "".join(twin.displays), twin.displays
    assert out.returncode == 0, out.stdout + out.stderr
    assert (2, "PWM") in eval(out.stdout.strip())


def test_the_link_reports_bad_frames_with_the_clock_past_half_its_period(tmp_path):
    from tools.logger.frames import ERROR, HELLO, STATE
    from tools.port.linkpipe import LinkPipe

    flash(tmp_path, cfg={"watchdog_ms": 2000})
    with LinkPipe() as pipe, open(pipe.host_path, "r+b", buffering=0) as host:
        os.set_blocking(host.fileno(), False)
        # ticks_ms starts past 2**29, where ticks_diff(now, 0) is negative: a link that
        # started its clocks at 0 would hold its reports back for days
        with booted(tmp_path, ticks_start=(1 << 29) + 5000, link_path=pipe.device_path) as twin:
            twin.wait_display(lambda text: "0" in text, timeout=60)
            kinds = _frames_until(host, lambda kinds: {HELLO, STATE} <= set(kinds), 30)
            assert {HELLO, STATE} <= set(kinds), kinds  # the link is up
            host.write(b"\x00not a frame\x00")
            kinds = _frames_until(host, lambda kinds: ERROR in kinds, 3.0)
    assert ERROR in kinds, kinds  # the bad frame reported within about a second


def _frames_until(stream, done, timeout):
    """The kinds of the frames read from `stream` until `done(kinds)` or `timeout` s."""
    from tools.logger.frames import FrameReader

    reader, kinds = FrameReader(), []
    deadline = time.monotonic() + timeout
    while not done(kinds) and time.monotonic() < deadline:
        time.sleep(0.05)
        kinds += [kind for kind, _, _ in reader.feed(_drain(stream))]
    return kinds


def _drain(stream):
    got = b""
    while True:
        try:
            chunk = stream.read(4096)
        except OSError:
            chunk = None
        if not chunk:
            return got
        got += chunk


HEAP_MAIN = """import gc, sys
gc.collect()
print('heap', gc.mem_free(), ','.join(sorted(sys.modules)))
print('done')
"""


def test_the_esp32_heap_is_the_boards_alone(tmp_path):
    """On the twin that plays the ESP32's heap, main.py finds the GC heap a stock board
    gives (releases.gc_heap) free: the twin's own Python (the emulated machine, network,
    socket and tls modules, the chips, the flash's block device) is loaded before the heap
    is set and takes none of it; the modules it stands in for are C on the board."""
    from tools.port import upy
    from tools.sim.board.esp32 import releases

    path = upy.release_binary(releases.LATEST[releases.NEWEST], bits=32)
    if path is None:
        pytest.skip("no 32-bit interpreter of MicroPython %d.%d (docs/performance.md)"
                    % releases.NEWEST)
    flash(tmp_path, firmware=False, files={"main.py": HEAP_MAIN})
    with booted(tmp_path, version="1.29.0", interpreter=path, heap="esp32") as twin:
        assert twin.gc_heap == releases.ONE_GROWTH
        twin.wait_output("done", timeout=30)  # the line before it is whole
    line = next(t for t in bytes(twin.output).decode().splitlines() if t.startswith("heap "))
    free, modules = int(line.split()[1]), line.split()[2].split(",")
    # the heap pinned to within its rounding, less the pool the board's first new names
    # take (heap.own_qstr_pool: on the ESP32 twice the frozen names' pool, some KB), and
    # nothing of this tree in it
    assert releases.ONE_GROWTH - 16384 <= free <= releases.ONE_GROWTH + 512, free
    assert [m for m in modules if m.split(".")[0] in ("tools", "boardlib", "firmware")] == []



# Lists the names the twin has interned when main.py starts, then the names of the modules
# that are C or frozen on a stock ESP32, which the board has in flash (and of their classes).
NAMES_MAIN = """import micropython
micropython.qstr_info(1)
for name in ("machine", "network", "socket", "select", "time", "sys", "os", "_asyncio",
             "tls", "ssl", "asyncio", "umqtt.simple", "binascii", "struct", "errno", "gc",
             "micropython", "vfs", "json", "array"):
    try:
        m = __import__(name)
    except ImportError:
        continue
    for part in name.split(".")[1:]:
        m = getattr(m, part)
    for a in dir(m):
        print("in-flash", a)
        if isinstance(getattr(m, a), type):
            for b in dir(getattr(m, a)):
                print("in-flash", b)
print("lis" + "ted")  # (made as it runs: "listed" is not among the names listed above)
"""


def test_the_twin_charges_the_names_it_shares_with_the_firmware(tmp_path):
    """A name the twin's own Python has interned before the firmware starts (the board
    profile's, the font's, words like `flash` or `status`) costs the firmware nothing here,
    where on the board it takes a pool entry and its characters from the heap (unless the
    board has it in flash, with its C and frozen modules). The twin counts them in the
    budget (tools/sim/board/heap.py, SHARED_NAMES and SHARED_NAME_CHARS): they must be at
    least what the networked firmware, with the modules of its way up, shares with it
    today."""
    from tools.bench import harness as bench_harness
    from tools.bench import heap as bench_heap
    from tools.port import upy
    from tools.sim.board import heap
    from tools.sim.board.esp32 import releases

    path = upy.release_binary(releases.LATEST[releases.NEWEST], bits=32)
    if path is None:
        pytest.skip("no 32-bit interpreter of MicroPython %d.%d (docs/performance.md)"
                    % releases.NEWEST)
    flash(tmp_path / "state", firmware=False, files={"main.py": NAMES_MAIN})
    with booted(tmp_path / "state", version="1.29.0", interpreter=path, heap="esp32") as twin:
        twin.wait_output("listed", timeout=60)
    text = bytes(twin.output).decode(errors="replace")
    twins = bench_heap.interned_names(text)[0]
    in_flash = {line.split()[1] for line in text.splitlines()
                if line.startswith("in-flash ") and len(line.split()) == 2}
    assert "Pin" in in_flash and "WLAN" in in_flash  # machine's, network's
    interp = bench_harness.Interpreter(path)
    stage = bench_heap.stage_tree(str(tmp_path), "mpy", True)
    frozen = bench_heap.frozen_image(stage, str(tmp_path))
    out = bench_heap.heap_device(["code", "net"], stage, interp, frozen)
    firmware = set(out["names"]) | set(out["names_dial"])
    assert "MQTTClient" in firmware and "journal" in firmware
    shared = (firmware & twins) - in_flash
    chars = sum(len(name) + 1 for name in shared)
    assert len(shared) <= heap.SHARED_NAMES and chars <= heap.SHARED_NAME_CHARS, \
        (len(shared), chars, sorted(shared))

def test_the_flash_takes_real_time_to_erase(tmp_path):
    """Ten sectors' worth of file on a stock twin: ten erases at least, 45 ms each
    (tools/sim/board/flash.py, TYPICAL), during which the chip runs nothing; its clock,
    time.ticks_ms, sees them pass."""
    code = ("import time\nt=time.ticks_ms()\nf=open('big.bin','wb')\nf.write(bytes(40960))\n"
            "f.close()\nprint('took', time.ticks_diff(time.ticks_ms(), t))")
    with booted(tmp_path) as twin:
        started = time.monotonic()
        out = mpremote(twin.usb_path, "exec", code)
        assert out.returncode == 0, out.stdout + out.stderr
        took = int(out.stdout.split("took")[1].split()[0])
        assert took >= 10 * 45, out.stdout
        assert time.monotonic() - started >= 0.45


def test_a_shot_made_while_the_chip_process_waits_is_seen_as_it_was_made(tmp_path):
    """A machine busy with other work may not run the chip's process for a while: the pins
    knocked over and stood up 300 ms later reach it together. They are made on the chip's
    clock as far apart as the host made them (tools/sim/board/esp32/hardware.py,
    poll_host), so the firmware sees the pins down for 300 ms, as a board's sensors hold
    them, and scores the shot; made at once they were down for one read, a bounce, and the
    shot was lost."""
    import signal

    flash(tmp_path)
    with booted(tmp_path) as twin:
        before = twin.wait_display(scores_shown, timeout=60)
        mark = len(twin.displays)
        chip = twin._running.pid
        os.kill(chip, signal.SIGSTOP)  # the chip's process gets no time
        try:
            for spot in (1, 2):
                twin.set_spot(spot, standing=False)
            time.sleep(0.3)
            for spot in (1, 2):
                twin.set_spot(spot, standing=True)
            time.sleep(0.5)
        finally:
            os.kill(chip, signal.SIGCONT)
        twin.wait_display(lambda text: "+" in text, timeout=20, since=mark)
        after = twin.wait_display(scores_shown, timeout=20, since=mark)
        assert after != before
