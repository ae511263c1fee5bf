"""The terminal table (`make sim`): the digits, the spots beside them, the shot marks and
the setup menu item in words under them, laid out for 80 columns; and the interactive
firmware reporting what it sees.
"""

import json
import os
import queue
import subprocess
import threading
import time

from boardlib.calls import NAMES
from tools.port import upy
from tools.sim import view as simview
from tools.sim import words

ZERO = bytes.fromhex("3f")  # "0"


def _view(**changes):
    view = {"standing": 0x1F, "pins": 0, "carom": 0, "fouls": [], "rules": "ddbu",
            "menu": None, "check": False}
    view.update(changes)
    return view


def test_the_spots_are_drawn_in_their_places_standing_or_down():
    rows = simview.draw_table(_view(standing=0b10101))  # pins on 1, 3 and 5; 2 and 4 down
    assert rows[0] == "the table:"
    assert rows[1] == "     1 ●"
    assert rows[2] == " 2 ○ 3 ● 4 ○"
    assert rows[3] == "     5 ●"


def test_the_marks_of_the_shot_in_progress_in_words():
    assert simview.shot_marks(_view()) == "nothing marked"
    assert simview.shot_marks(_view(pins=0b00101, carom=1)) == "pins 1 3, carom"
    assert simview.shot_marks(_view(pins=0b00100)) == "pin 3"
    ceb = _view(rules="ceb", carom=2, fouls=["quilles", "foul"])
    assert simview.shot_marks(ceb) == "casino, quilles, foul"
    # outside five-pins a held carom is a carom (the firmware scores it so)
    assert simview.shot_marks(_view(carom=2)) == "carom"
    assert simview.screen_rows(ZERO * 8, _view(fouls=["stop30"]))[-1] == "shot: stop30"


def test_the_table_stands_beside_the_digits_and_the_shot_under_them():
    rows = simview.screen_rows(ZERO * 8, _view(standing=0b11011))
    digits = simview.draw_digits(ZERO * 8)
    assert len(rows) == len(digits) + 1
    for row, digit_row in zip(rows[:7], digits, strict=True):
        assert row.startswith(digit_row.rstrip())
    assert rows[2].endswith(" 2 ● 3 ○ 4 ●")
    assert rows[7] == "shot: nothing marked"


def test_the_buzzers_call_in_words_under_the_digits():
    rows = simview.screen_rows(ZERO * 8, _view(call="foul"))
    assert rows[-1] == "buzzer: " + words.CALL_WORDS["foul"]
    assert set(words.CALL_WORDS) == set(NAMES[1:])  # every call has its words
    assert not any(r.startswith("buzzer") for r in simview.screen_rows(ZERO * 8, _view()))


def test_every_menu_item_has_words():
    from firmware.menu import ITEMS

    assert sorted(words.MENU_WORDS) == sorted(ITEMS)


def test_the_menu_item_in_words_under_its_digits():
    layout_rows = simview.screen_rows(ZERO * 8, _view(menu="d2"))
    assert layout_rows[-1] == "setup menu: distance of player 2"
    assert simview.menu_words(_view(menu="check")) == "setup menu: wiring check"
    assert simview.menu_words(_view(check=True)).startswith("wiring check:")
    assert simview.menu_words(_view()) == ""
    assert len(simview.screen_rows(ZERO * 8, _view())) == 8  # no words line outside the menu


LONG_STATE = {"rules": "ceb", "distance": [999, 999], "score": [998, 997], "turn": 2,
              "status": "finished", "winner": "tie", "sets": [2, 2], "marked": 2,
              "members": [2, 1]}


def test_no_row_of_any_frame_is_wider_than_80_columns():
    from firmware.menu import ITEMS

    views = [None, _view(), _view(check=True), _view(standing=0, pins=0x1F, carom=2,
                                                     rules="ceb", fouls=["quilles"] * 9)]
    views += [_view(menu=item) for item in ITEMS]
    for view in views:
        for state in (None, LONG_STATE):
            for logged in ("", "logger: " + "a very long line from the logger " * 5):
                rows = simview.screen(bytes([0xFF] * 8), state, logged, view)
                assert all(len(row) <= simview.WIDTH == 80 for row in rows), rows
                text = "\n".join(rows)
                assert "winner: tie" in text and "up: A2 b1" in text if state else True


def test_the_key_lines_name_every_hold():
    game = " ".join(simview.key_lines(_view()))
    for _, key, _, _, short in words.BUTTONS:
        assert "%s: %s" % (key.upper(), short) in game
    assert "O: the setup menu" in game
    menu = " ".join(simview.key_lines(_view(menu="d1")))
    assert "C: a distance +1 (a press: +10)" in menu and "o: next item" in menu
    check = " ".join(simview.key_lines(_view(check=True)))
    assert "hold U: leave" in check and "hold O: the segment sweep again" in check


def test_quitting_says_where_the_game_is_and_only_what_is_true():
    saved = {"saved": True, "shot": False, "image": "/abs/state/flash.img"}
    said = simview.quit_words(saved, "state")
    assert said == ["game saved on the board's flash (state/flash.img): the next start "
                    "resumes it"]
    said = simview.quit_words(dict(saved, shot=True), "state")
    assert "the shot in progress was not scored" in said[1]
    assert "NOT" in simview.quit_words(dict(saved, saved=False), "state")[0]
    assert "not kept" in simview.quit_words(dict(saved, image="scratch/flash.img"), None)[0]
    assert "without saying" in simview.quit_words(None, "state")[0]


def test_the_screen_reads_every_line_the_board_wrote_before_drawing():
    screen = simview.Screen("no logger")
    first = "F %s %s\n" % ((ZERO * 8).hex(), json.dumps(_view(menu="d1")))
    second = "F %s %s\n" % ((ZERO * 8).hex(), json.dumps(_view(menu="d2")))
    assert screen.feed((first + second[:10]).encode())  # a line and a half
    assert screen.view["menu"] == "d1"
    assert screen.feed(second[10:].encode())
    assert screen.view["menu"] == "d2"
    assert not screen.feed(b"S {")  # half a line: nothing new to draw yet
    assert screen.feed(b'"rules": "ddbu"}\nQ {"saved": true}\n')
    assert screen.state == {"rules": "ddbu"} and screen.quit == {"saved": True}


def test_the_interactive_firmware_reports_spots_marks_and_menu(tmp_path):
    runner = os.path.join(upy.ROOT, upy.entry("board"))
    proc = subprocess.Popen(
        upy.command([runner, "--interactive", "--state", str(tmp_path / "state"),
                     "--buzzer", "2"]),
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=upy.env(),
        cwd=upy.ROOT, text=True)
    views = []
    lines = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in proc.stdout], daemon=True
                     ).start()

    def wait_for(test, seconds=20):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            try:
                line = lines.get(timeout=0.2)
            except queue.Empty:
                continue
            if line.startswith("F "):
                views.append(json.loads(line.split(" ", 2)[2]))
                if test(views[-1]):
                    return views[-1]
        raise AssertionError("not seen; views: %r" % views[-5:])

    def send(line):
        proc.stdin.write(line + "\n")
        proc.stdin.flush()

    try:
        wait_for(lambda v: v["standing"] == 0x1F)
        send("spot 2")
        wait_for(lambda v: v["standing"] == 0b11101)
        seen = wait_for(lambda v: v["pins"] == 0b00010)  # counted once past the glitch time
        assert seen["carom"] == 0 and seen["fouls"] == []
        send("press carom")
        wait_for(lambda v: v["carom"] == 1)
        send("hold foul")  # ddbu: a held foul is a second "foul"
        wait_for(lambda v: v["fouls"] == ["foul"])
        time.sleep(0.5)  # let the held button go before the next press
        send("press foul")
        wait_for(lambda v: v["fouls"] == ["foul", "foul"])
        send("spot 2")  # stood up again: the shot scores by itself, the marks clear
        wait_for(lambda v: v["standing"] == 0x1F)
        wait_for(lambda v: v["pins"] == 0 and v["fouls"] == [] and v["carom"] == 0)
        if not any(v["call"] == "foul" for v in views):
            wait_for(lambda v: v["call"] == "foul")  # the buzzer calls the foul
        send("hold ok")
        wait_for(lambda v: v["menu"] == "d1")
        time.sleep(0.5)
        send("press ok")
        wait_for(lambda v: v["menu"] == "d2")
        send("quit")
        line = ""
        while not line.startswith("Q "):
            line = lines.get(timeout=20)
        assert json.loads(line[2:])["saved"] is True  # read back from the image
        proc.wait(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
