"""A long game resumes in a heap little larger than its history (rules_core/snapshot.py), and
plays on in the heap a stock ESP32 leaves the firmware: the board's heap after its code has
no large blocks to spare, so the history is kept in chunks (docs/performance.md)."""

import pytest
from helpers import device_case_tests

from tools.bench import harness
from tools.bench.esp32 import ESP32_HEAP
from tools.bench.heap import frozen_image, heap_device, stage_tree

pytestmark = pytest.mark.long(12)

test_device_case = device_case_tests("resume_heap_cases", interpreters=("micropython",))

LATE_AT = 950  # the game's shots when the board resumes it
PLAYED_ON = 60  # and the shots played after that


def test_a_long_game_resumed_in_the_heap_a_board_leaves_plays_on(tmp_path):
    # As the bench's late shot run (tools/bench/board.py): a 950-shot game on the flash,
    # the firmware deployed as .mpy on the 32-bit interpreter, and the heap sized so that
    # after the board's start-up and the game's resume what is free is what a stock
    # ESP32 leaves the firmware's data (its GC heap, tools.bench.esp32.ESP32_HEAP, less the
    # code the firmware holds, measured now). Then 60 shots through the board's own loop:
    # no step may raise (a MemoryError there is counted, tried again, and leaves the
    # watchdog unfed). With the history in one growing block the growth asked for 4,172
    # bytes in one piece about 32 shots in, found none, and 6 steps raised.
    interp = harness.Interpreter.find()
    if interp.bits != 32:
        pytest.skip("no 32-bit interpreter here: %s" % interp.note)
    late = tmp_path / "late"
    late.mkdir()
    harness.device(["game", LATE_AT, str(late)], heapsize=harness.BIG_HEAP, interp=interp)
    image = str(late / "flash.img")
    deployed = stage_tree(str(tmp_path), "mpy", True)
    code = heap_device(["code"], deployed, interp, frozen_image(deployed, str(tmp_path)))
    stage = harness._stage_for_counting(str(tmp_path / "counted"))
    heap = harness._board_heap(interp, ESP32_HEAP - code["held"], image, PLAYED_ON, stage)
    said, out = harness.board_run(["taskshots", PLAYED_ON, image], heap, interp, stage)
    raised = [line for line in out.splitlines() if line.startswith("step error")]
    assert said["errors"] == 0, (heap, said["errors"], raised)
    assert said["shots"] == PLAYED_ON and said["game_shots"] == LATE_AT + PLAYED_ON
