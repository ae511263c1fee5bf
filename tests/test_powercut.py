"""A power cut at every flash write of a recorded 200-shot game never loses a scored event.

A game of 200 shots (with adjusts and undos) is generated and played here on CPython; its
states after every prefix of events are the reference. On the MicroPython unix port the
same events go through boardlib.journal onto littlefs over a RAM flash that logs every
program and erase. The flash is then rebuilt as it stood when the power went after each
operation (whole, and for a program also half written), remounted and resumed: the state
must be the one after every event whose record() had returned, or after one more (the
event being written when the power went), never an older one, and loading never raises.
A second check cuts the power for real (the device stops after write N) on a sample of N,
showing that rebuilding from the log is the same as cutting the power. The device side is
tests/device/powercut_cases.py.
"""

import binascii
import json
import random

import pytest
from helpers import micropython_value, run_on_micropython

from rules_core import Game, GameError
from rules_core import events as ev

pytestmark = pytest.mark.long(7)

UNDO = "undo"
BLOCKS = 384  # 1.5 MB of 4 KB blocks, as on the board


def make_game(seed=7, shots=200):
    """Events of one ddbu game (record bytes or UNDO) and the reference after each."""
    rng = random.Random(seed)
    game = Game("ddbu", distance=(500, 480), sets=1, first=1)
    events = []
    while sum(1 for e in events if e != UNDO and e[0] == ev.KIND_SHOT) < shots:
        roll = rng.random()
        if game.finished or (roll < 0.07 and game.history):
            game.undo()
            events.append(UNDO)
            continue
        if roll < 0.10:
            rec = ev.encode_adjust(rng.choice((1, 2)), rng.choice((-4, -2, 2, 6)))
        else:
            pins = rng.choice((0, 0, 0, 1, 4, 5, 16, 31, 10))
            carom = 1 if rng.random() < 0.2 else 0
            fouls = ("foul",) if rng.random() < 0.08 else ()
            rec = ev.encode_shot(pins, carom, fouls)
        try:
            game.apply(rec)
        except GameError:  # e.g. an adjust past the distance: not an event of the game
            continue
        events.append(rec)
    return events


def reference_keys(events):
    """keys[t]: the fingerprint of the game after new_game and the first t events."""
    game = Game("ddbu", distance=(500, 480), sets=1, first=1)
    keys = [fingerprint(game.state_json(), game.history.tobytes())]
    for e in events:
        if e == UNDO:
            game.undo()
        else:
            game.apply(e)
        keys.append(fingerprint(game.state_json(), game.history.tobytes()))
    return keys


def fingerprint(state_json, history):
    return "%08x" % binascii.crc32(state_json.encode() + b"|" + history)


@pytest.fixture(scope="module")
def game_events():
    events = make_game()
    return events, reference_keys(events)


def as_text(events):
    return ["undo" if e == UNDO else e.hex() for e in events]


def test_recorded_game_is_what_the_test_says():
    events = make_game()
    shots = [e for e in events if e != UNDO and e[0] == ev.KIND_SHOT]
    assert len(shots) >= 200
    assert UNDO in events
    assert any(e != UNDO and e[0] == ev._KIND_ADJUST for e in events)


def test_power_cut_at_every_write(game_events, hostile_report):
    events, keys = game_events
    cuts, continued = sweep_and_check(events, keys, True)
    hostile_report("flash: power cut after every write", cuts=cuts,
                   resumed_as_recorded=cuts, played_on_after=continued)


def test_power_cut_at_every_write_of_compactions_in_pieces(hostile_report):
    # As the board compacts: a piece at a time between events (maintain_piece), and
    # events that come while a compaction is under way (record() finishes it first).
    events = make_game(seed=11, shots=120)
    keys = reference_keys(events)
    cuts, continued = sweep_and_check(events, keys, "pieces")
    hostile_report("flash: power cut after every write, compaction in pieces", cuts=cuts,
                   resumed_as_recorded=cuts, played_on_after=continued)


def crossing_game(seed=5):
    """A game whose history fills its first chunk (128 events, kept in game.his once
    whole) and is then undone back into it and played on: make_game's events with six
    undos in a row where the history first reaches 130 events."""
    events = make_game(seed=seed, shots=150)
    game = Game("ddbu", distance=(500, 480), sets=1, first=1)
    for i, e in enumerate(events):
        if e == UNDO:
            game.undo()
        else:
            game.apply(e)
        if game.history.count == 130:
            return events[:i + 1] + [UNDO] * 6 + events[i + 1:]
    raise AssertionError("the game never reached 130 events")


def test_power_cut_at_every_write_around_the_history_file(hostile_report):
    # The history's first chunk goes into game.his, is undone back into and written
    # again with other events, compacted in pieces as the board does.
    events = crossing_game()
    keys = reference_keys(events)
    cuts, continued = sweep_and_check(events, keys, "pieces")
    hostile_report("flash: power cut after every write, history file", cuts=cuts,
                   resumed_as_recorded=cuts, played_on_after=continued)


def sweep_and_check(events, keys, upkeep):
    """The power cut after every write (tests/device/powercut_cases.py, sweep), each
    resume checked; returns (cuts, cuts played on after)."""
    call = ["sweep", [as_text(events), BLOCKS, upkeep]]
    _, ends, cuts = micropython_value(run_on_micropython("powercut_cases", [call], timeout=600)[0])
    assert len(ends) == len(events) + 1  # new_game and every event completed uncut
    assert len(cuts) > len(events) * 2  # every write of the game was cut, whole and torn
    continued = 0
    for cut in cuts:
        j, torn, done, status, out = cut
        assert status != "raised", "cut after op %d (torn %s): %s" % (j, torn, cut)
        # done events had finished (new_game is the first): the state after them, or
        # after the one being written when the power went
        allowed = set()
        if done == 0:
            allowed.add("none")
        else:
            allowed.add(keys[done - 1])
        if done < len(keys):
            allowed.add(keys[done])
        assert out[0] in allowed, "cut after op %d (torn %s): lost an event" % (j, torn)
        # littlefs commits atomically: a cut never leaves a damaged journal behind
        assert status in (0, 1), cut
        if len(out) == 4:
            continued += 1
            assert out[1] == out[2] == out[3] == keys[keys.index(out[3])], cut
            assert out[3] in keys, "events recorded after a resume were not all kept"
    assert continued > 10
    return len(cuts), continued


def test_cut_device_matches_rebuilt_flash(game_events):
    events, keys = game_events
    picks = ["1f", "2t", "3f", "7t", "40f", "41t", "123f", "200t", "250t", "300f", "333t"]
    call = ["real_cuts", [as_text(events), picks, BLOCKS]]
    results = micropython_value(run_on_micropython("powercut_cases", [call], timeout=600)[0])
    assert len(results) == len(picks)
    for result in results:
        _, _, done, status, out, last_end = result
        assert last_end == -1, "the power cut did not stop the game: %s" % (result,)
        allowed = {"none"} if done == 0 else {keys[done - 1]}
        if done < len(keys):
            allowed.add(keys[done])
        assert out in allowed, result
        assert status in (0, 1)


def test_reference_states_differ_along_the_game(game_events):
    # The check above means something only if the fingerprints tell prefixes apart.
    _, keys = game_events
    assert len(set(keys)) > len(keys) * 0.8
    assert json.loads(Game("ddbu", distance=(500, 480)).state_json())["shots"] == 0
