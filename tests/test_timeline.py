"""The raw input timeline (CONTRACT.md section 4): parser and virtual-time levels.

The scenarios (tests/device/timeline_cases.py) run on CPython and, all in one process, on
the MicroPython unix port.
"""

import os

import pytest
from helpers import cpython_value, device_module, micropython_value, run_on_micropython

HERE = os.path.dirname(os.path.abspath(__file__))

TIMELINE = device_module("timeline_cases")

CONTRACT_EXAMPLE = """\
0      pins up 1 2 3 4 5   # these spots report a pin standing
1200   pin 2 down          # spot 2 reports no pin
1215   pin 2 up
3000   press carom         # a short press
5000   hold foul 1200      # a press held for 1200 ms
"""

# Event tuples: (time, kind, a, b); kinds PINS=1, PIN=2, PRESS=3, HOLD=4; buttons
# carom=0, foul=1, ok=2, undo=3; a PIN carries the spot's bit and 1 up / 0 down.
PARSES = {
    "contract example": (
        CONTRACT_EXAMPLE,
        [[0, 1, 31, 0], [1200, 2, 2, 0], [1215, 2, 2, 1], [3000, 3, 0, 100], [5000, 4, 1, 1200]],
    ),
    "comments, blanks, tabs, CRLF, equal times": (
        "# a game\r\n\r\n0\tpins up 2 4\r\n  100 press ok  \n100 press undo # same time\n"
        "100 pin 5 down\n",
        [[0, 1, 0b01010, 0], [100, 3, 2, 100], [100, 3, 3, 100], [100, 2, 16, 0]],
    ),
    "pins up with no spot: every spot dark": ("7 pins up\n", [[7, 1, 0, 0]]),
    "a press after the last one ended": (
        "0 press foul\n101 press foul\n2000 hold foul 5\n",
        [[0, 3, 1, 100], [101, 3, 1, 100], [2000, 4, 1, 5]],
    ),
    "empty": ("# nothing\n\n", []),
    "a byte order mark, CR and CRLF line ends, no end on the last line": (
        "\ufeff0 pins up 2 4 # Fran\u00e7ois\r100 press ok\r\n200 pin 5 down",
        [[0, 1, 0b01010, 0], [100, 3, 2, 100], [200, 2, 16, 0]],
    ),
    "a week at most": ("604799900 press ok\n", [[604799900, 3, 2, 100]]),
}

ERRORS = {
    "time missing": ("0 pins up 1\npin 2 down\n", "error: 2: the time in ms must be"),
    "negative time": ("-5 pin 2 down\n", "error: 1: the time in ms must be"),
    "time goes back": (
        "0 pins up 1\n\n1200 pin 2 down\n1100 pin 2 up\n",
        "error: 4: time 1100 is before the previous event's 1200",
    ),
    "no event": ("0 pins up\n20\n", "error: 2: an event must follow the time"),
    "unknown event": ("0 pins up\n5 pinz 2 down\n", "error: 2: unknown event 'pinz'"),
    "pins without up": ("0 pins down 1\n", "error: 1: expected 'pins up'"),
    "spot 6": ("0 pins up 1 2 3 4 5 6\n", "error: 1: spot 6 does not exist (spots are 1-5)"),
    "spot 0": ("0 pin 0 down\n", "error: 1: spot 0 does not exist"),
    "spot twice": ("0 pins up 1 2 2\n", "error: 1: spot 2 is listed twice"),
    "spot not a number": ("0 pin two down\n", "error: 1: a spot must be a whole number"),
    "pin sideways": ("0 pin 2 sideways\n", "error: 1: expected 'pin N up' or 'pin N down'"),
    "unknown button": ("0 press cue\n", "error: 1: unknown button 'cue'"),
    "press with a time": ("0 press ok 300\n", "error: 1: expected 'press BUTTON'"),
    "hold without time": ("0 hold foul\n", "error: 1: expected 'hold BUTTON MS'"),
    "hold of 0 ms": ("0 hold foul 0\n", "error: 1: the hold time must be at least 1 ms"),
    "hold not a number": ("0 hold foul long\n", "error: 1: the hold time in ms must be"),
    "still pressed": (
        "0 pins up\n3000 press carom\n3100 press carom\n",
        "error: 3: carom is still pressed (line 2) until 3100 ms",
    ),
    "still held": (
        "5000 hold foul 1200\n6000 press ok\n6100 press foul\n",
        "error: 3: foul is still pressed (line 1) until 6200 ms",
    ),
    "Arabic-Indic digits": ("\u0661\u0660 press ok\n", "error: 1: character U+0661 (column 1)"),
    "a no-break space": ("0\u00a0press ok\n", "error: 1: character U+00A0 (column 2)"),
    "a time past a week": ("604800001 pin 2 down\n", "error: 1: the time in ms is past"),
    "a press past a week": ("604800000 press ok\n", "error: 1: the press lasts past"),
    "a line of 5000 bytes": ("0 press ok # " + "x" * 5000 + "\n",
                             "error: 1: line longer than 4096 bytes"),
}

LEVELS_TEXT = """\
0    pins up 1 2 3 4 5
10   pin 2 down
20   press carom
20   pin 2 up
30   hold undo 17
35   pins up 4
40   pin 1 up
1000 press ok       # seen by a poll inside 1000..1099
2000 press ok       # over before the next poll of a slow caller: never seen
"""

# Before any line every spot stands; a press covers [t, t + 100); a hold [t, t + ms).
LEVELS_EXPECTED = [
    [
        [0, 31, 0],
        [5, 31, 0],
        [10, 29, 0],
        [15, 29, 0],
        [20, 31, 0b0001],
        [30, 31, 0b1001],
        [35, 8, 0b1001],
        [45, 9, 0b1001],
        [47, 9, 0b0001],
        [119, 9, 0b0001],
        [120, 9, 0],
        [1050, 9, 0b0100],
        [1500, 9, 0],
        [2200, 9, 0],
    ],
    2100,
]
LEVELS_TIMES = [row[0] for row in LEVELS_EXPECTED[0]]


def timeline_files():
    folder = os.path.join(HERE, "timelines")
    names = sorted(n for n in os.listdir(folder) if n.endswith(".timeline"))
    texts = []
    for name in names:
        with open(os.path.join(folder, name)) as f:
            texts.append(f.read())
    return names, texts


def calls():
    out = [["parse_or_error", [text]] for text, _ in PARSES.values()]
    out += [["parse_or_error", [text]] for text, _ in ERRORS.values()]
    out += [["levels_trace", [LEVELS_TEXT, LEVELS_TIMES]]]
    out += [["file_event_counts", [timeline_files()[1]]]]
    return out


@pytest.fixture(scope="module")
def unix_port():
    return [micropython_value(r) for r in run_on_micropython("timeline_cases", calls())]


@pytest.fixture(params=["cpython", "unix port"])
def results(request):
    if request.param == "cpython":
        return [cpython_value(TIMELINE, name, *args) for name, args in calls()]
    return request.getfixturevalue("unix_port")


def test_good_timelines_parse_to_exact_events(results):
    got = results[: len(PARSES)]
    assert dict(zip(PARSES, got, strict=True)) == {k: v[1] for k, v in PARSES.items()}


def test_bad_lines_name_the_line_and_the_problem(results):
    got = results[len(PARSES) : len(PARSES) + len(ERRORS)]
    for (case, (_, expected)), message in zip(ERRORS.items(), got, strict=True):
        assert isinstance(message, str), case
        assert message.startswith(expected), (case, message)


def test_levels_follow_the_timeline_in_virtual_time(results):
    assert results[len(PARSES) + len(ERRORS)] == LEVELS_EXPECTED


def test_every_shipped_timeline_parses(results):
    names, texts = timeline_files()
    counts = results[-1]
    assert len(counts) == len(names) >= 9
    assert all(n > 0 for n in counts), dict(zip(names, counts, strict=True))


def test_load_reads_a_file(tmp_path):
    from tools.sim.board import timeline

    path = tmp_path / "a.timeline"
    path.write_text(CONTRACT_EXAMPLE)
    assert timeline.load(str(path)) == timeline.parse(CONTRACT_EXAMPLE)
    assert timeline.BUTTONS == ("carom", "foul", "ok", "undo")
