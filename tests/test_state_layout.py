"""The saved board state's layout (docs/state-layout.md), pinned on fixed bytes.

Round trips cannot see a swapped shift: save and load would agree with each other and
still break every game on flash and every logger database. These tests read fixed bytes
with a decoder written from the documented table, and check that the rules core writes
exactly those bytes and reads them back to the documented board state. The old-layout
bytes were written by the firmware before two-man teams existed.
"""

import json
import struct

import pytest
from helpers import device_value

from rules_core import Game, GameError, resume, snapshot
from rules_core.savedstate import SAVE_SIZE, STATE_SIZE, save


def table_decode(data):
    """The fields of a saved state, read as docs/state-layout.md's table says."""
    fields = struct.unpack(">BBBH11HB", data)
    game, last, match, announce = fields[:4]
    counts = fields[4:15]
    hidden = fields[15]
    return {
        "rules": game & 3, "status": game >> 2 & 3, "winner": game >> 4 & 3,
        "turn": (game >> 6 & 1) + 1, "first": (game >> 7 & 1) + 1,
        "best_of": last & 3, "last_series": last >> 2 & 3, "last": last >> 4 & 1,
        "last_player": (last >> 5 & 1) + 1, "last_to": (last >> 6 & 1) + 1,
        "last_foul": last >> 7 & 1,
        "sets": [match & 3, match >> 4 & 3], "members": [(match >> 2 & 1) + 1,
                                                         (match >> 3 & 1) + 1],
        "teams": match >> 7, "spare": match >> 6 & 1, "announce": announce,
        "distance": list(counts[0:2]), "score": list(counts[2:4]),
        "innings": list(counts[4:6]), "series": counts[6], "high": list(counts[7:9]),
        "shots": counts[9], "last_points": counts[10],
        "said_twenty": hidden & 3, "said_distance": hidden >> 2 & 3,
        "break_done": hidden >> 4 & 1, "reds": hidden >> 5 & 3, "opening": hidden >> 7,
    }


def play(game, shots):
    for pins, carom, fouls in shots:
        game.shot(pins, carom, fouls)
    return game


# (how the game is made and played, its saved bytes, the fields the table reads from them)
CASES = [
    (lambda: play(Game("ddbu", (40, 30), first=2), [(0b00101, 1, ()), (0b1, 0, ()),
                                                    (0, 0, ())]),
     "80700000000028001e0000000a0001000100000000000a0003000002",
     {"rules": 0, "turn": 1, "first": 2, "last": 1, "last_player": 2, "last_to": 2,
      "score": [0, 10], "innings": [1, 1], "high": [0, 10], "shots": 3, "said_twenty": 2}),
    # Two lone caroms in a row: the reds counter (seed 000 5.12) is hidden state.
    (lambda: play(Game("ddbu", 40), [(0, 1, ()), (0, 1, ())]),
     "00100000000028002800080000000100000008000800000002000440",
     {"reds": 2, "series": 8, "last_points": 4, "last_player": 1, "last_to": 1}),
    # A finished russian game won by player 1 through player 2's foul.
    (lambda: play(Game("russian", 10, first=2), [(0b11111, 0, ("foul",))]),
     "dab0000204000a000a001e0000000000010000000000000001001e05",
     {"rules": 2, "status": 2, "winner": 1, "turn": 2, "first": 2, "last_foul": 1,
      "last_player": 2, "last_to": 1, "announce": 0x204, "said_twenty": 1,
      "said_distance": 1}),
    # ceb best of 3, set 2 under way: sets, best-of index, the opening flag cleared.
    (lambda: play(Game("ceb", 30, 3), [(0b100, 0, ()), (0b101, 1, ()), (0, 0, ("rouge",)),
                                       (0b100, 0, ()), (0, 0, ()), (0b11011, 2, ())]),
     "4111100001001e001e000b0000000100020000000b000a0006000b01",
     {"rules": 1, "best_of": 1, "sets": [0, 1], "turn": 2, "announce": 1, "opening": 0,
      "teams": 0, "members": [1, 1]}),
    # ceb teams: team 2 scored, so team 1 changed its player (CEB 28.3).
    (lambda: play(Game("ceb", 10, 3, first=2, teams=1), [(0b100, 0, ()), (0b1, 0, ()),
                                                        (0b10, 0, ())]),
     "8171850000000a000a00000004000200010000000000020003000202",
     {"teams": 1, "members": [2, 1], "sets": [1, 0], "turn": 1, "first": 2}),
]


@pytest.mark.parametrize("case", range(len(CASES)))
def test_the_game_writes_exactly_the_documented_bytes(case):
    make, hexdata, fields = CASES[case]
    game = make()
    data = bytes.fromhex(hexdata)
    assert len(data) == SAVE_SIZE
    assert save(game) == data
    read = table_decode(data)
    for key, value in fields.items():
        assert read[key] == value, key
    assert read["spare"] == 0
    state = game.state()
    assert read["score"] == state["score"] and read["sets"] == state["sets"]
    assert read["distance"] == state["distance"] and read["shots"] == state["shots"]
    assert read["turn"] == state["turn"] and read["first"] == state["first"]
    # The fixed bytes read back to the same board state, whole and as the link's payload.
    assert snapshot.unpack_state(data[:STATE_SIZE]) == state


def test_members_are_read_from_their_own_bits():
    game = Game("ceb", 10, 3, first=2, teams=1)
    base = bytearray(save(game))
    for bits, members in ((0x00, [1, 1]), (0x04, [2, 1]), (0x08, [1, 2]), (0x0C, [2, 2])):
        data = bytearray(base)
        data[2] |= bits
        assert snapshot.unpack_state(bytes(data[:STATE_SIZE]))["members"] == members


# Saved by the firmware before two-man teams (and before the named layout): a ceb best of 3
# in set 2 and a ddbu handicap game, as rules_core.snapshot.pack wrote them to flash.
OLD_CEB = bytes.fromhex(
    "504231000600014111100001001e001e000b0000000100020000000b000a0006000b010101000000001e"
    "001e000000000001000000000000000000000000800104000001250000010004000104000001000000015b"
    "0000")
OLD_DDBU = bytes.fromhex(
    "5042310004000180700000000028001e0003000a0001000100000000000a0003000002c0000000000028"
    "001e0000000000000001000000000000000000000001250000010100000100000002010003")
OLD_CEB_STATE = (
    '{"rules":"ceb","distance":[30,30],"score":[11,0],"remaining":[19,30],"turn":2,'
    '"innings":[1,2],"series":0,"high":[11,10],"sets":[0,1],"shots":6,"status":"playing",'
    '"winner":null,"last":{"player":1,"points":11,"to":1,"foul":false},"set_points":null,'
    '"match_points":null,"announce":["20-remaining:1"],"marked":1,"members":null,"first":1,'
    '"best_of":3,"last_series":null}')


def test_a_game_saved_before_teams_resumes_as_singles_and_plays_on():
    game = resume.unpack(OLD_CEB)
    assert game.state_json() == OLD_CEB_STATE
    game.undo()  # the checkpoint and history of the old layout still undo exactly
    assert game.state()["score"] == [0, 0] and game.state()["sets"] == [0, 1]
    game.shot(0b11111, 1, ())
    ddbu = resume.unpack(OLD_DDBU)
    state = ddbu.state()
    assert (state["score"], state["distance"], state["first"]) == ([3, 10], [40, 30], 2)
    assert state["members"] is None and state["marked"] is None
    for _ in range(4):
        ddbu.undo()
    assert ddbu.state() == Game("ddbu", (40, 30), first=2).state()


@pytest.mark.parametrize("byte, bit, why", [
    (2, 0x40, "the spare bit of the match byte"),
    (2, 0x04, "a team member in singles"),
    (3, 0x04, "an announcement bit past the last one"),
    (0, 0x0C, "status 3"),
])
def test_bytes_outside_the_layout_are_refused(byte, bit, why):
    data = bytearray(OLD_CEB)
    data[7 + byte] |= bit  # the current state follows the 7-byte head
    with pytest.raises(GameError):
        resume.unpack(bytes(data))


def test_teams_bit_outside_ceb_is_refused():
    data = bytearray(save(Game("ddbu", 40))[:STATE_SIZE])
    data[2] |= 0x80
    with pytest.raises(GameError):
        snapshot.unpack_state(bytes(data))


def test_micropython_reads_the_old_bytes_the_same():
    out = device_value("micropython", "snapshot_cases", "unpacked_state_json", OLD_CEB)
    assert out == OLD_CEB_STATE
    assert json.loads(OLD_CEB_STATE)["marked"] == 1  # set 2 is opened by player 2
