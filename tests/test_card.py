"""The players' quick card (docs/quick-card.svg): the committed card is the generator's,
its pictures are the board's own, and its words are the ones `make sim` shows."""

import re
import xml.etree.ElementTree as ET
from xml.sax.saxutils import escape

from firmware.menu import ITEMS, Menu
from tools.board import card
from tools.sim import view as simview
from tools.sim import words
from tools.sim.board.chips import decode_segments

SVG = "{http://www.w3.org/2000/svg}"


def read(segments_hex):
    return "".join(decode_segments(b & 0x7F) for b in bytes.fromhex(segments_hex))


def pictures(text, key):
    root = ET.fromstring(text)
    return {g.get("data-" + key): g.get("data-segments") for g in root.iter(SVG + "g")
            if g.get("data-" + key)}


def test_the_committed_card_is_the_generators(tmp_path, capsys):
    with open(card.DEFAULT_OUT) as f:
        assert f.read() == card.card(), "run: python -m tools.card"
    assert card.main(["--check"]) == 0
    stale = tmp_path / "card.svg"
    stale.write_text(card.card().replace("quick card", "old card"))
    assert card.main(["--check", "--out", str(stale)]) == 1
    assert "out of date" in capsys.readouterr().err
    assert card.main(["--out", str(stale)]) == 0
    assert card.main(["--check", "--out", str(stale)]) == 0


def test_every_menu_item_with_the_picture_the_menu_draws_and_its_words():
    made = card.card()
    shown = pictures(made, "item")
    assert list(shown) == list(ITEMS)
    settings = {"rules": "ceb", "distance": (60, 60), "sets": 3, "first": 1, "teams": 0}
    for item, segments in shown.items():
        # a board with a buzzer; "AGAIn" is the first item after a finished game
        menu = Menu(settings, again=settings if item == "again" else None, sound=True)
        buf = bytearray(8)
        while ITEMS[menu.item] != item and not menu.closed:  # walked to as a player: ok
            menu.button(2, 1)
        menu.draw(buf)
        assert segments == bytes(buf).hex(), item
        assert ">%s<" % escape(words.MENU_WORDS[item]) in made
    assert read(shown["d1"]) == "d1    60" and read(shown["new"]).startswith("nEW")


def test_every_button_press_and_hold_and_every_display_word():
    made = card.card()
    root = ET.fromstring(made)
    for name, _, press, hold, _ in words.BUTTONS:
        (group,) = [g for g in root.iter(SVG + "g") if g.get("data-button") == name]
        said = " ".join(t.text for t in group.iter(SVG + "text"))
        assert name in said and press.split()[0] in said and hold.split()[-1] in said
    assert "the setup menu" in made  # holding ok
    shown = pictures(made, "picture")
    assert list(shown) == [name for name, _ in words.DISPLAY_WORDS]
    assert read(shown["foul"]) == "FouL  +8" and read(shown["remaining"]) == "    r 18"
    assert read(shown["distance"]) == "dI5t    "
    assert read(shown["ask"]) == "nEW   oK"  # k reads as K: one shape
    for code, _ in words.ERROR_WORDS:
        assert "Err %s" % code in made


def test_the_card_and_the_simulator_read_one_table(monkeypatch):
    monkeypatch.setitem(words.MENU_WORDS, "d1", "handicap of player 1")
    assert ">handicap of player 1<" in card.card()
    view = {"menu": "d1", "check": False}
    assert simview.menu_words(view) == "setup menu: handicap of player 1"


def test_it_fits_one_a4_page():
    made = card.card()
    assert 'width="210mm" height="297mm"' in made
    ys = [int(y) for y in re.findall(r' y="(\d+)"', made)]
    heights = [int(y) + int(h) for y, h in re.findall(r' y="(\d+)" width="\d+" height="(\d+)"',
                                                       made)]
    assert max(ys + heights) <= card.PAGE_H - 10
    for t in ET.fromstring(made).iter(SVG + "text"):
        if t.get("text-anchor") == "start":  # about 0.55 em a character in DejaVu Sans
            right = int(t.get("x")) + len(t.text) * int(t.get("font-size")) * 0.55
            assert right <= card.PAGE_W - 20, t.text
