"""`make sim` as a player sees it: `python -m tools.sim` in an 80-column terminal, keys in,
frames out, read back from the screen the way a person reads it.

Every frame the terminal draws is checked: no row wider than 80 columns, and the words
under the digits name the setup menu item whose picture the digits show (the digits are
read back from the drawn 7-segment figures, not from what the simulator meant to draw).
"""

import os
import queue
import subprocess
import sys
import threading
import time

from helpers import MENU_LINES, menu_item_read

from tools.port import upy
from tools.sim.board.chips import decode_segments

CLEAR = "\x1b[H\x1b[2J"
GAP = 6  # columns between the players' halves: a digit is 6 columns and a space


def read_digits(rows):
    """The 8 segment bytes of the 7-segment figures drawn in `rows` (seven text rows)."""
    rows = [r.ljust(80) for r in rows]
    segments = []
    for i in range(8):
        x = i * 7 + (GAP if i >= 4 else 0)
        lit = (rows[0][x + 1] == "━", rows[1][x + 5] == "┃", rows[4][x + 5] == "┃",
               rows[6][x + 1] == "━", rows[4][x] == "┃", rows[1][x] == "┃",
               rows[3][x + 1] == "━", rows[6][x + 5] == "●")
        segments.append(sum(bit << n for n, bit in enumerate(lit)))
    return bytes(segments)


def menu_item_shown(segments):
    """The menu item a person reads on the digits, or None."""
    return menu_item_read("".join(decode_segments(s & 0x7F) for s in segments))


class Terminal:
    """`python -m tools.sim` with its keys on a pipe; its frames, as rows, in order."""

    def __init__(self, cwd, *args):
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tools.sim", *args], cwd=cwd, stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            env=dict(os.environ, TERM="dumb", PYTHONPATH=upy.ROOT))
        self.raw = ""
        self._chunks = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        while True:
            data = os.read(self.proc.stdout.fileno(), 65536)
            self._chunks.put(data)
            if not data:
                break

    def _take(self, timeout):
        """Read what came; False once the output has ended."""
        try:
            data = self._chunks.get(timeout=timeout)
        except queue.Empty:
            return True
        self.raw += data.decode(errors="replace")
        return data != b""

    @property
    def frames(self):
        """Every whole frame so far: the last one too once its key lines are all there."""
        parts = [p.split("\r\n") for p in self.raw.split(CLEAR)[1:]]
        if parts and not _whole(parts[-1]):
            parts.pop()
        return [rows[:_end_of_keys(rows)] for rows in parts]

    @property
    def tail(self):
        """What came after the last frame: the words on quitting."""
        rows = self.raw.split(CLEAR)[-1].split("\r\n")
        return rows[_end_of_keys(rows):]

    def wait_for(self, test, seconds=30):
        """Wait for a new frame `test` takes; returns it."""
        seen = len(self.frames)
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            frames = self.frames
            for frame in frames[seen:]:
                if test(frame):
                    return frame
            seen = len(frames)
            self._take(0.2)
        raise AssertionError("no such frame; the last: %r" % (self.frames[-1:],))

    def key(self, key):
        self.proc.stdin.write(key.encode())
        self.proc.stdin.flush()

    def quit(self):
        self.key("q")
        end = time.monotonic() + 30
        while time.monotonic() < end and self._take(0.5):
            pass
        self.proc.wait(timeout=30)

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def _end_of_keys(rows):
    """The index of the first row after the key lines (len(rows) when they are unfinished)."""
    keys = [i for i, row in enumerate(rows) if row.startswith("keys:")]
    if not keys:
        return len(rows)
    i = keys[-1] + 1
    while i < len(rows) and rows[i].startswith(("press:", "hold:", "       ")):
        i += 1
    return i


def _whole(rows):
    return len(rows) > 1 and rows[-1] == "" and _end_of_keys(rows) < len(rows)


def words_under(frame):
    for row in frame[9:]:
        if row.startswith(("setup menu: ", "wiring check: ")):
            return row
    return None


def menu_item(frame):
    under = words_under(frame)
    return next((item for item, line in MENU_LINES.items() if line == under), None)


def check_frame(frame):
    """What a person would catch on this frame: a row past 80 columns, or words under the
    digits that do not name what the digits show."""
    for row in frame:
        assert len(row) <= 80, "%d columns: %r" % (len(row), row)
    if frame[2:3] == ["(starting)"]:
        return
    shown = menu_item_shown(read_digits(frame[2:9]))
    under = words_under(frame)
    if shown is not None:
        assert under == MENU_LINES[shown], "the digits show %s, the words say %r" % (
            shown, under)
    elif under is not None and under.startswith("setup menu: "):
        raise AssertionError("the words say %r over digits that show no menu item" % under)


def test_every_frame_fits_80_columns_and_the_menu_words_are_the_digits_item(tmp_path):
    term = Terminal(tmp_path, "--state", "state", "--rules", "ceb")
    try:
        first = term.wait_for(lambda f: "ceb" in "".join(f) and "hold:" in "".join(f))
        holds = " ".join(row for row in first if row.startswith(("hold:", "       ")))
        for key in "CFOU":  # every hold is named, holding ok opening the setup menu
            assert key + ": " in holds, holds
        assert "O: the setup menu" in holds
        term.key("O")
        term.wait_for(lambda f: menu_item(f) == "d1")  # the distances first
        time.sleep(0.5)  # the hold lets go 200 ms after the menu opens (tools/sim/board/
        # interactive.py): a key pressed before that would be the same press
        # make sim's table has a buzzer (GPIO 2): its on/off item too
        walk = ["d2", "first", "rules", "sets", "teams", "sound", "check", "new"]
        for item in walk:  # ok: the next item, each one shown with its own words
            term.key("o")
            term.wait_for(lambda f, item=item: menu_item(f) == item
                          and menu_item_shown(read_digits(f[2:9])) == item)
        for key, item in (("c", "new"), ("c", "new"), ("u", "check"), ("u", "sound"),
                          ("o", "check"), ("c", "check")):
            term.key(key)
            term.wait_for(lambda f, item=item: menu_item_shown(read_digits(f[2:9])) == item)
        term.key("o")  # "tESt yES": the wiring check
        term.wait_for(lambda f: (words_under(f) or "").startswith("wiring check: "))
        term.wait_for(lambda f: any(r.startswith("keys:") and "hold U" in r for r in f))
        term.key("U")  # held and let go: back to the game
        term.wait_for(lambda f: words_under(f) is None and "ceb" in "".join(f), 60)
        term.quit()
    finally:
        term.close()
    assert term.proc.returncode == 0, term.proc.stderr.read()
    for frame in term.frames:
        check_frame(frame)
    seen = {menu_item(frame) for frame in term.frames}
    # every item, each checked above against its digits; AGAIn comes only after a finished
    # game (tests/test_table.py walks it)
    assert seen >= set(MENU_LINES) - {"again"}, seen
    said = [row for row in term.tail if row.strip()]
    assert said and all(len(row) <= 80 for row in said), said
    assert "game saved on the board's flash (state/flash.img)" in " ".join(said), said
    assert (tmp_path / "state" / "flash.img").stat().st_size > 0


def test_without_a_state_folder_quitting_says_the_game_is_not_kept(tmp_path):
    term = Terminal(tmp_path)
    try:
        term.wait_for(lambda f: "ddbu" in "".join(f))
        term.quit()
    finally:
        term.close()
    said = " ".join(term.tail)
    assert "not kept" in said and "saved" not in said, said
