"""What every rules id shares (RULES.md section 4): undo, adjust, errors that change
nothing, the board state keys (CONTRACT section 3), records and their history."""

import json

import pytest
from helpers import ALL_PINS, spots

from rules_core import Game, GameError, events

ALL = ALL_PINS
game = Game

CONTRACT_KEYS = [
    "rules", "distance", "score", "remaining", "turn", "innings", "series", "high", "sets",
    "shots", "status", "winner", "last", "set_points", "match_points", "announce",
    "marked", "members",
]


def test_state_has_every_contract_key_then_the_extras_in_order():
    g = game("ddbu", (40, 30))
    s = g.state()
    assert list(s)[:18] == CONTRACT_KEYS
    assert list(s)[18:] == ["first", "best_of", "last_series"]
    assert s == {
        "rules": "ddbu", "distance": [40, 30], "score": [0, 0], "remaining": [40, 30],
        "turn": 1, "innings": [1, 0], "series": 0, "high": [0, 0], "sets": [0, 0],
        "shots": 0, "status": "playing", "winner": None, "last": None, "set_points": None,
        "match_points": None, "announce": [], "marked": None, "members": None, "first": 1,
        "best_of": 1, "last_series": None,
    }


def test_state_json_is_one_line_in_key_order_and_equals_state():
    g = game("ceb", 30, 3, 2)
    g.shot(pins=spots(3), carom=1, fouls=("rouge",))
    text = g.state_json()
    assert "\n" not in text
    assert json.loads(text) == g.state()
    assert text.startswith('{"rules":"ceb","distance":[30,30],"score":[')
    assert list(json.loads(text)) == list(g.state())


def test_s13_6_undo_restores_each_earlier_state_exactly():
    g = game("ddbu", 30)
    plan = [
        dict(pins=ALL, carom=1), dict(pins=spots(1)), dict(), dict(pins=ALL),
        dict(carom=1), dict(fouls=("foul",)), dict(pins=ALL, carom=1), dict(pins=ALL),
    ]
    saved = [g.state_json()]
    for shot in plan:
        g.shot(**shot)
        saved.append(g.state_json())
    g.adjust(2, 3)
    saved.append(g.state_json())
    for k in range(len(saved) - 1, 0, -1):
        assert g.state_json() == saved[k]
        g.undo()
    assert g.state_json() == saved[0]
    assert len(g.history) == 0
    with pytest.raises(GameError, match="nothing to undo"):
        g.undo()


def test_undo_reopens_a_finished_game_and_only_undo_is_accepted_once_finished():
    g = game("ddbu", 10)
    g.shot()
    before = g.state_json()
    g.shot(pins=ALL)
    assert g.finished
    with pytest.raises(GameError, match="finished"):
        g.shot()
    with pytest.raises(GameError, match="finished"):
        g.adjust(1, 2)
    g.undo()
    assert not g.finished
    assert g.state_json() == before


def test_undo_across_checkpoints_on_a_500_event_game():
    g = game("russian", 9999)
    saved = []
    for k in range(500):
        saved.append(g.state_json())
        if k % 7 == 3:
            g.shot(carom=1)
        elif k % 11 == 5:
            g.adjust(1 + k % 2, 1)
        else:
            g.shot(pins=k % 32)
    assert len(g.history) == 500 * events._RECORD_SIZE
    for k in range(499, 400, -1):
        g.undo()
        assert g.state_json() == saved[k]
    g.shot(pins=ALL)
    g.undo()
    assert g.state_json() == saved[401]


def test_adjust_changes_only_the_score():
    g = game("ddbu", 40)
    g.shot(pins=spots(1, 2))
    g.adjust(2, 6)
    s = g.state()
    assert (s["score"], s["series"], s["turn"], s["shots"]) == ([4, 6], 4, 1, 1)
    assert s["last"] == {"player": 1, "points": 4, "to": 1, "foul": False}
    assert s["announce"] == []
    g.adjust(1, -4)
    assert g.state()["score"] == [0, 6]


@pytest.mark.parametrize("rules,distance,player,delta,message", [
    ("ddbu", 40, 1, -3, "below 0"),
    ("ceb", 40, 2, -5, "below 0"),
    ("ddbu", 40, 1, 40, "cannot reach the distance"),
    ("ceb", 20, 2, 25, "cannot reach the distance"),
    ("ddbu", 40, 3, 1, "player"),
    ("ddbu", 40, 1, 0, "changes nothing"),
    ("ddbu", 40, 1, 1.5, "whole number"),
])
def test_bad_adjust_is_rejected_and_changes_nothing(rules, distance, player, delta, message):
    g = game(rules, distance)
    g.shot(pins=spots(1))
    before = (g.state_json(), g.history.tobytes())
    with pytest.raises(GameError, match=message):
        g.adjust(player, delta)
    assert (g.state_json(), g.history.tobytes()) == before


def test_russian_adjust_may_pass_the_distance_without_ending():
    g = game("russian", 20)
    g.adjust(1, 25)
    s = g.state()
    assert (s["score"], s["status"], s["remaining"]) == ([25, 0], "playing", [0, 20])


def test_ddbu_adjust_of_a_player_at_the_distance_is_rejected():
    g = game("ddbu", 10)
    g.shot(pins=ALL)
    with pytest.raises(GameError, match="undo"):
        g.adjust(1, -2)


@pytest.mark.parametrize("kwargs", [
    dict(pins=32), dict(pins=-1), dict(pins="1"), dict(carom=3), dict(carom=-1),
    dict(fouls=("",)), dict(fouls=(3,)), dict(fouls=("foul",) * 17),
])
def test_bad_shot_is_rejected_and_changes_nothing(kwargs):
    g = game("ceb", 40)
    g.shot(pins=spots(1))
    before = (g.state_json(), g.history.tobytes())
    with pytest.raises(GameError):
        g.shot(**kwargs)
    assert (g.state_json(), g.history.tobytes()) == before


@pytest.mark.parametrize("record", [
    b"", b"\x01\x00\x00", b"\x09\x00\x00\x00", b"\x01\x60\x00\x00", b"\x02\x03\x00\x01",
    b"\x02\x01\x00\x00", b"\x01\x00\x00\x00\x00", "abcd", 4, None,
])
def test_bad_record_is_rejected_and_changes_nothing(record):
    g = game("ddbu", 40)
    before = g.state_json()
    with pytest.raises(GameError):
        g.apply(record)
    assert g.state_json() == before
    assert len(g.history) == 0


@pytest.mark.parametrize("args", [
    ("pool", 40), ("ddbu", 0), ("ddbu", 10000), ("ddbu", (40,)), ("ddbu", "40"),
    ("ddbu", 40, 1, 3), ("ceb", 40, 4), ("ddbu", (40, -1)),
])
def test_bad_settings_are_rejected(args):
    with pytest.raises(GameError):
        Game(*args)


def test_apply_of_encoded_records_equals_the_calls():
    a = game("ceb", 30, 3)
    b = game("ceb", 30, 3)
    a.shot(pins=spots(1, 3), carom=2, fouls=("quilles", "dehors", "wrongball"))
    a.adjust(2, -1 if a.state()["score"][1] else 1)
    for k in range(0, len(a.history), events._RECORD_SIZE):
        b.apply(a.history[k:k + events._RECORD_SIZE])
    assert a.state_json() == b.state_json()
    assert a.history.tobytes() == b.history.tobytes()


def test_the_history_is_kept_in_chunks_of_one_size_made_one_at_a_time():
    # docs/performance.md, "The history in chunks": 128 events and their 4 checkpoints a
    # chunk, never one growing block; an undo keeps the chunks, reserve() makes the next
    # one before the events that need it.
    from rules_core import game as game_module

    assert game_module._CHUNK_EVENTS == 1 << game_module._CHUNK_SHIFT
    assert game_module._CHUNK_MARKS * game_module._CHECKPOINT_EVERY == game_module._CHUNK_EVENTS
    assert game_module._RECORDS_AT == game_module._CHUNK_MARKS * game_module._SAVE_SIZE
    assert game_module._RECORD_BYTES == game_module._CHUNK_EVENTS * events._RECORD_SIZE
    assert game_module._CHUNK_BYTES == game_module._RECORDS_AT + game_module._RECORD_BYTES
    g = game("russian", 9999)
    chunks = g.history.chunks
    records = []
    for k in range(300):
        records.append(g.shot(pins=k % 32, carom=k % 3))
        assert len(chunks) == len(records) // 128 + 1, k  # the next checkpoint's chunk too
        assert all(type(c) is bytearray and len(c) == 624 for c in chunks)
    first = list(chunks)
    for _ in range(200):
        g.undo()
        records.pop()
    assert chunks == first and all(a is b for a, b in zip(chunks, first, strict=True))
    assert g.history.tobytes() == b"".join(records) and len(g.history) == 400
    assert [g.history.record(n) for n in (0, 99)] == [records[0], records[99]]
    for k in range(28):  # played on over the undone events: their chunks, nothing new
        records.append(g.shot(pins=k % 32))
    assert all(a is b for a, b in zip(chunks, first, strict=True))
    g.reserve()  # 128 events: the next 32 and their checkpoint are in the second chunk
    assert len(chunks) == 3
    while g.history.count + 32 < 384:
        records.append(g.shot(pins=1))
    g.reserve()
    assert len(chunks) == 4 and len(chunks[3]) == 624
    assert g.history.tobytes() == b"".join(records)


def test_shot_and_adjust_return_the_record_they_applied():
    g = game("ddbu", 40)
    rec = g.shot(pins=spots(2), carom=1)
    assert g.history.tobytes() == rec == events.encode_shot(spots(2), 1, ())
    assert g.adjust(2, 3) == bytes(g.history[4:])


def test_a_foul_code_given_again_is_one_more_ordinary_foul():
    rec = events.encode_shot(0, 0, ("rouge", "rouge", "foul", "foul", "x"))
    assert (rec[2], rec[3]) == (events._FOUL_ROUGE | events.FOUL_ORDINARY, 3)


def test_records_are_fixed_size_and_decode_back():
    rec = events.encode_shot(spots(1, 5), 2, ("rouge", "dehors", "someother"))
    assert len(rec) == events._RECORD_SIZE
    kind, pins, carom, (bits, other) = events.decode(rec)
    assert (kind, pins, carom) == (events.KIND_SHOT, spots(1, 5), 2)
    assert (bits, other) == (events.encode_shot(0, 0, ("rouge", "dehors"))[2], 1)
    assert [name for i, name in enumerate(events.FOUL_NAMES) if bits >> i & 1] == [
        "rouge", "dehors"]
    rec = events.encode_adjust(2, -300)
    assert len(rec) == events._RECORD_SIZE
    assert events.decode(rec) == (events._KIND_ADJUST, 2, -300, None)


def test_winner_codes_and_last_are_null_until_set():
    g = game("russian", 100)
    assert g.state()["last"] is None
    assert g.state()["winner"] is None


def test_the_event_paths_constants_are_the_shared_ones():
    # rules_core.game keeps the numbers its event path reads as constants of its own (no
    # lookup of an imported name per event): they must be rules_core's shared ones
    from rules_core import boardstate, ceb, common, ddbu, game, russian, savedstate, settings

    assert (game._PLAYING, game._BREAK, game._FINISHED) == (
        common._PLAYING, common.BREAK, common._FINISHED)
    assert (boardstate._FINISHED, boardstate._TIE) == (common._FINISHED, common.TIE)
    assert (game._RECORD_SIZE, game._KIND_SHOT, game._KIND_ADJUST, game._MAX_OTHER,
            game._MAX_DELTA) == (events._RECORD_SIZE, events.KIND_SHOT, events._KIND_ADJUST,
                                 events.MAX_OTHER, events._MAX_DELTA)
    assert (game._A_TWENTY, game._A_DISTANCE, game._A_BREAK, game._A_FINISHED) == (
        common.A_TWENTY, common.A_DISTANCE, common._A_BREAK, common.A_FINISHED)
    assert game._SAVE_SIZE == savedstate.SAVE_SIZE
    # and the rules modules and the saved state theirs
    assert (ddbu._TIE, ddbu._A_LAST_SERIES) == (common.TIE, common.A_LAST_SERIES)
    assert (ceb._CENTRE, ceb._A_SET, russian._CENTRE) == (
        common._CENTRE, common.A_SET, common._CENTRE)
    assert (ceb._QUILLES, russian._STOP30) == (events._FOUL_QUILLES, events._FOUL_STOP30)
    assert savedstate._FINISHED == common._FINISHED
    assert (game._PAST, game._OPENING) == (settings.PAST, settings.OPENING)


def test_an_event_past_the_boards_limit_is_refused_and_changes_nothing():
    # a count the board stores in 16 bits never passes 65535: the event that would take
    # one past it is refused, and the game is what it was before it (russian: a score may
    # pass the distance, and an adjust may take it there)
    g = Game("russian", distance=(100, 100))
    g.adjust(1, 32767)
    g.adjust(1, 32767)
    before = g.state()
    with pytest.raises(GameError):
        g.shot(pins=spots(1, 2))  # the score would pass 65535
    assert g.state() == before and g.history.count == 2
    g.shot(pins=0)  # a miss still plays
    assert g.history.count == 3


def test_a_game_takes_the_chunks_made_before_it_first():
    # A board makes a stored game's chunks at power-up, while its heap is in large pieces
    # (firmware/powerup.py): the game takes those, the last first, before making any; one
    # read back from its snapshot too.
    from rules_core import game as game_module
    from rules_core import resume, snapshot

    made = [bytearray(game_module._CHUNK_BYTES) for _ in range(3)]
    game_module.SPARE.extend(made)
    try:
        g = game("russian", 9999)
        for k in range(300):  # three chunks' worth, and reserve() asks for the next
            g.shot(pins=k % 32, carom=k % 3)
            g.reserve()
        assert [id(c) for c in g.history.chunks[:3]] == [id(c) for c in made[::-1]]
        assert len(g.history.chunks) == 3 and not game_module.SPARE
        again = [bytearray(game_module._CHUNK_BYTES) for _ in range(3)]
        game_module.SPARE.extend(again)
        read = resume.unpack(snapshot.pack(g))
        assert [id(c) for c in read.history.chunks] == [id(c) for c in again[::-1]]
        assert read.state_json() == g.state_json()
        assert read.history.tobytes() == g.history.tobytes()
    finally:
        del game_module.SPARE[:]
