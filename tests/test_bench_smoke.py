"""`python -m tools.bench --smoke`: every figure is there, a number or null with a reason.

The full bench (`make bench`) takes minutes and is not part of `make test`; this runs the
same code paths with tiny sizes, plus checks of the bench's own arithmetic and of the
timeline it feeds the simulator.
"""

import json
import os
import subprocess
import sys

import pytest

from tools.bench import esp32 as bench_esp32
from tools.bench import front as bench_front
from tools.bench import harness as bench_harness
from tools.bench import heap as bench_heap
from tools.port import upy
from tools.sim.board import timeline

pytestmark = pytest.mark.long(77)


@pytest.fixture(scope="module")
def smoke():
    proc = subprocess.run([sys.executable, "-m", "tools.bench", "--smoke", "--json"],
                          capture_output=True, text=True, cwd=upy.ROOT, timeout=600)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_a_part_asked_for_alone_is_measured_without_the_parts_before_it():
    # the resume reads the game the game part leaves on the flash image: alone it plays one
    got = bench_front.measure(smoke=True, only=("resume",))
    assert got["resume_ms_upy"] is not None and got["resume_ms_upy"] > 0, got["notes"]
    assert got["flash_erases_per_shot"] is None  # the game's own figures are its part's


def test_every_key_is_a_number_or_an_explained_null(smoke):
    for key in bench_front.KEYS:
        assert key in smoke, key
        value = smoke[key]
        if value is None:
            assert smoke["notes"], "%s is null with no reason given" % key
        else:
            assert isinstance(value, (int, float)) and not isinstance(value, bool), key
            assert value >= 0, key


def test_figures_that_need_no_tool_beyond_the_port_are_measured(smoke):
    for key in ("idle_alloc_bytes", "shot_alloc_bytes", "frame_bytes",
                "line_rate_frames_per_s", "firmware_mpy_bytes", "logger_frames_per_s"):
        assert smoke[key] is not None, smoke["notes"]


def test_a_sealed_frame_allocates_nothing_and_costs_fourteen_bytes(smoke):
    # docs/network.md, "Frames proven": counter (4) and tag (10) around the frame
    assert smoke["seal_alloc_bytes"] == 0 and smoke["seal_bytes"] == 14
    assert smoke["mqtt_frame_bytes"] <= smoke["frame_bytes"] + 14
    if smoke["seal_state_instr"] is not None:
        # the longest frame takes one SHA-256 block more than a heartbeat
        assert smoke["seal_state_instr"] > smoke["seal_heartbeat_instr"] > 0


def test_line_rate_follows_from_the_frame_size(smoke):
    # 8N1 at 115200 baud: 11520 bytes a second
    assert smoke["line_rate_frames_per_s"] == pytest.approx(11520 / smoke["frame_bytes"],
                                                            rel=0.01)


def test_esp32_estimates_follow_from_the_instruction_counts(smoke):
    if smoke["tick_instr"] is None:
        pytest.skip(smoke["notes"].get("instructions", "no valgrind"))
    # cycles per counted instruction, calibrated for the interpreter that counted
    # (docs/performance.md), at 240 MHz
    cpi = (bench_esp32.ESP32_CYCLES_PER_INSTR32 if smoke["counted_on_bits"] == 32
           else bench_esp32.ESP32_CYCLES_PER_INSTR)
    per_us = 240 / cpi
    # the idle figure is the board's 10 ms tick (the FreeRTOS tick), scheduler included
    # (within 1 %, or half the step they are rounded to: 0.1 us and 0.01 ms, which a
    # smoke run's small counts can exceed 1 % of)
    assert smoke["esp32_tick_us_est"] == pytest.approx(smoke["tick_instr"] / per_us,
                                                       rel=0.01, abs=0.05)
    assert smoke["esp32_shot_ms_est"] == pytest.approx(smoke["shot_instr"] / per_us / 1000,
                                                       rel=0.01, abs=0.005)
    # a tick of an idle board is a little; a scored shot much more, early or late
    assert 0 < smoke["tick_instr"] < smoke["shot_instr"]
    assert smoke["shot_instr"] == max(smoke["shot_early_instr"], smoke["shot_late_instr"])
    assert min(smoke["shot_early_instr"], smoke["shot_late_instr"]) > smoke["tick_instr"]
    # each (and the idle tick) is the mean of the runs with the firmware's names numbered
    # from each start (docs/performance.md, "A shot at any numbering of the names"), between the
    # least and the most of them; the numberings differ (a shift that changed nothing
    # would count the same shots the same)
    spread = smoke["shot_spread_instr"]
    assert spread["name_shifts"] == list(bench_harness.SMOKE["name_shifts"])
    for phase, figure in (("tick", "tick_instr"), ("early", "shot_early_instr"),
                          ("late", "shot_late_instr")):
        low, high = spread[phase]
        assert low < high and low <= smoke[figure] <= high, spread


def test_the_conversion_is_the_published_pystone_figure_over_the_counted_one():
    # MicroPython's misc_pystone, 300 loops: 300 / 1731.94 s on a 160 MHz ESP32 (issue
    # 6565), against the instructions each unix port (64 and 32 bits) executes for them
    seconds = 300 / 1731.94
    assert bench_esp32.PYSTONE_LOOPS / bench_esp32.PYSTONE_ESP32_SCORE == pytest.approx(seconds)
    cycles = seconds * 160e6
    assert bench_esp32.ESP32_CYCLES_PER_INSTR == pytest.approx(
        cycles / bench_esp32.PYSTONE_UNIX_INSTR, abs=0.005)
    assert bench_esp32.ESP32_CYCLES_PER_INSTR32 == pytest.approx(
        cycles / bench_esp32.PYSTONE_UNIX32_INSTR, abs=0.005)
    for cpi in (bench_esp32.ESP32_CYCLES_PER_INSTR, bench_esp32.ESP32_CYCLES_PER_INSTR32):
        assert 1.5 < cpi < 4  # an in-order core, a VM from cache
    assert bench_esp32.ESP32_MHZ == 240 and bench_esp32.TICK_MS == 10


def test_the_firmware_runs_the_clock_the_bench_converts_for():
    with open(upy.ROOT + "/firmware/hw.py") as f:
        hw = f.read()
    assert ("_CPU_HZ = const(%d_000_000)" % bench_esp32.ESP32_MHZ in hw
            and "machine.freq(_CPU_HZ)" in hw)


def test_the_calibration_driver_runs_a_perf_bench_file():
    # the perf_bench interface (bm_setup returns run and result), on a made-up benchmark
    path = os.path.join(upy.ROOT, "tests", "board_programs", "loops_bench.py")
    for loops, total in ((0, 0), (10, 45)):
        proc = upy.run([bench_front.CALIBRATE_DRIVER, str(path), str(loops)], timeout=60)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.strip() == "(%d, %d)" % (loops, total)


def test_flash_life_arithmetic():
    # 384 blocks x 100,000 erases; at 1 erase a shot and 1000 shots a day: 105.2 years
    assert bench_esp32.FLASH_BLOCKS == 384
    years = (bench_esp32.FLASH_BLOCKS * bench_esp32.ERASE_CYCLES
             / (1.0 * bench_esp32.SHOTS_PER_DAY * 365))
    assert years == pytest.approx(105.2, abs=0.1)


def test_bench_timeline_is_valid_and_has_every_shot():
    text = bench_heap.shot_timeline(25)
    events = timeline.parse(text)
    oks = [e for e in events if e[1] == timeline.PRESS and e[2] == timeline.OK_BUTTON]
    assert len(oks) == 25
    assert bench_heap.shot_timeline(25) == text  # seeded: the same every run


def test_bench_timeline_scores_every_shot_in_the_sim(tmp_path):
    path = tmp_path / "five.timeline"
    path.write_text(bench_heap.shot_timeline(5))
    played, largest = bench_heap.plays(str(path), 5, 64 << 10)
    assert played  # 64 KB of heap for the data is plenty
    assert 0 < largest < 64 << 10  # and what is left in one piece at the end is reported


def test_the_heap_peaks_hold_the_code_and_the_data(smoke):
    keys = ("ram32_code_play_bytes", "ram32_code_net_bytes", "ram32_peak_play_bytes",
            "ram32_data_play_bytes", "ram32_largest_free_play_bytes")
    if any(smoke[key] is None for key in keys):
        pytest.skip(smoke["notes"].get("heap", "not measured"))
    # the network link's modules come on top of the play-only board's
    assert smoke["ram32_code_net_bytes"] > smoke["ram32_code_play_bytes"] > 0
    # a 500-shot game's peak: the code the board holds and the heap its data needs
    assert smoke["ram32_peak_play_bytes"] >= (smoke["ram32_code_play_bytes"]
                                              + smoke["ram32_data_play_bytes"])
    assert 0 < smoke["ram32_largest_free_play_bytes"] < bench_esp32.ESP32_HEAP


def test_the_code_in_flash_leaves_its_bytecode_out_of_the_heap(smoke):
    detail = smoke["ram32_detail"] or {}
    if "code_play_rom_bytes" not in detail:
        pytest.skip(smoke["notes"].get("heap", "not measured"))
    # the same modules run from a ROMFS image: their bytecode stays in the image (half of
    # what the .mpy deployment holds on 32 bits; on 64 the objects and names weigh more)
    rom, mpy = detail["code_play_rom_bytes"], smoke["ram32_code_play_bytes"]
    assert 0 < rom and (mpy - rom) * 3 > mpy, (rom, mpy)
    assert detail["peak_play_rom_bytes"] >= (detail["code_play_rom_bytes"]
                                             + smoke["ram32_data_play_bytes"])
    if "code_net_rom_bytes" in detail:
        assert (detail["code_play_rom_bytes"] < detail["code_net_rom_bytes"]
                < smoke["ram32_code_net_bytes"])
        assert detail["peak_net_rom_bytes"] >= (detail["code_net_rom_bytes"]
                                                + detail["data_net_bytes"])


def test_the_networked_peak_says_which_way_its_game_was_played(smoke):
    detail = smoke["ram32_detail"] or {}
    if "net_game" not in detail:
        pytest.skip(smoke["notes"].get("heap_net", "not measured"))
    note = smoke["notes"]["heap_net_game"]
    assert "ram32_peak_net_bytes" in note
    if detail["net_game"] == "tls":  # over TLS on a 32-bit interpreter with TLS
        assert "over TLS" in note and detail["tls_gc_on_bits"] == 32
    else:  # over plain MQTT, the TLS objects measured apart added
        assert detail["net_game"] == "plain" and "tls_gc_bytes" in note
        assert detail["data_net_bytes"] == detail["data_net_plain_bytes"]
    assert detail["data_net_plain_bytes"] >= smoke["ram32_data_play_bytes"] \
        + detail["tls_gc_bytes"]


@pytest.mark.parametrize("threshold", [12_300, 12_800, 13_000, 20_305, 21_000])
def test_a_bisected_heap_search_ends_within_its_fine_step_of_the_threshold(threshold):
    """The networked games' searches start at a budget that fails and bisect upwards: to
    `step` alone they stopped anywhere in a window of up to a KB above the threshold,
    where the start put the midpoints (the link's share, a difference of two searches,
    moved by up to a KB when the play figure did). With `fine` each ends within one fine
    step of it, from any start."""
    tried = []

    def works(budget):
        tried.append(budget)
        return budget >= threshold

    for start in (12_288, 11_520, 12_032):
        coarse = bench_heap.smallest_heap(works, 1024, start=start)
        found = bench_heap.smallest_heap(works, 1024, start=start, fine=256)
        assert threshold <= found < threshold + 256, (start, found)
        assert found <= coarse < threshold + 1024
    assert len(tried) < 100  # a few runs more than the bisection, not a walk from the top


def test_an_import_search_climbs_from_its_start_and_says_when_nothing_fits():
    """An import peak lies a few steps above the code it starts from: the imports' search
    (climb) goes up from there by doubling steps, and asks for a large heap only when the
    smaller ones fail; the games' searches bisect from `high`, whose layouts are less
    monotone (a TLS game once fitted 15,616 bytes and not 20,096). Either says when even
    `high` fails, rather than give a figure."""
    tried = []

    def works(budget):
        tried.append(budget)
        return budget >= 90_000

    found = bench_heap.smallest_heap(works, 16_384, high=512 << 10, start=81_920, climb=True)
    assert found == 98_304 and max(tried) < 2 * found and len(tried) <= 4, tried
    tried.clear()
    found = bench_heap.smallest_heap(works, 16_384, high=512 << 10, start=81_920)
    assert 90_000 <= found < 90_000 + 16_384 and max(tried) == 512 << 10
    for climb in (False, True):
        with pytest.raises(bench_harness.Unavailable, match="fails even with 262144"):
            bench_heap.smallest_heap(lambda budget: False, 1024, start=12_288, climb=climb)


def test_without_a_32_bit_interpreter_the_bench_says_it_counts_on_64_bits(monkeypatch):
    monkeypatch.setenv(upy.UPY32_ENV, "no/such/micropython")
    monkeypatch.setattr(upy, "_found32", {})
    interp = bench_harness.Interpreter.find()
    assert interp.bits == 64 and interp.path is None
    assert "64-bit" in interp.note and "no/such/micropython" in interp.note


def fake_port(path, tls):
    """A 32-bit unix port's stand-in whose `import tls` succeeds or fails."""
    path.write_text('#!/bin/sh\n[ "$2" = "import tls" ] && exit %d\necho %d 1.29\n'
                    % (0 if tls else 1, 2**31 - 1))
    path.chmod(0o755)
    return str(path)


def test_the_tls_objects_are_taken_on_a_32_bit_interpreter_with_tls(monkeypatch, tmp_path):
    # the 32-bit interpreter has TLS: it takes them itself
    with_tls = bench_harness.Interpreter(fake_port(tmp_path / "with-tls", True))
    assert bench_heap.tls_interpreter(with_tls) == (with_tls, None)
    # it has none: another 32-bit build with TLS does (tools.port.upy.interpreter32_tls)
    plain = bench_harness.Interpreter(fake_port(tmp_path / "plain", False))
    other = fake_port(tmp_path / "other", True)
    monkeypatch.setattr(upy, "interpreter32_tls", lambda: (other, None))
    interp, note = bench_heap.tls_interpreter(plain)
    assert interp.path == other and interp.bits == 32 and note is None


def test_without_a_32_bit_interpreter_with_tls_the_note_says_64_bits(monkeypatch, tmp_path):
    plain = bench_harness.Interpreter(fake_port(tmp_path / "plain", False))
    monkeypatch.setattr(upy, "interpreter32_tls", lambda: (None, "none here"))
    interp, note = bench_heap.tls_interpreter(plain)
    assert interp is bench_harness.PINNED and interp.bits == 64
    assert "64-bit" in note and "tls_gc_bytes" in note and note.endswith("none here")
    # with everything on the pinned 64-bit port, its own note says so
    assert bench_heap.tls_interpreter(bench_harness.PINNED) == (bench_harness.PINNED, None)
