"""Saving and resuming games (rules_core.snapshot), on CPython and the MicroPython port."""

import pytest
from helpers import ALL_PINS, device_module, micropython_value, run_on_micropython, spots

from rules_core import GameError, resume, snapshot
from rules_core.game import Game

ALL = ALL_PINS
game = Game


sample_game = device_module("snapshot_cases").sample_game


def test_unpack_gives_the_same_state_history_and_working_undo():
    g = sample_game()
    resumed = resume.unpack(snapshot.pack(g))
    assert resumed.state() == g.state()
    assert resumed.history.tobytes() == g.history.tobytes()
    while len(g.history):
        g.undo()
        resumed.undo()
        assert resumed.state_json() == g.state_json()


def test_unpack_does_not_reapply_the_history(monkeypatch):
    g = sample_game()
    data = snapshot.pack(g)

    def refuse(self, record):
        raise AssertionError("history re-applied on resume")

    monkeypatch.setattr(Game, "_run", refuse)
    assert resume.unpack(data).state() == g.state()


def test_pack_state_is_small_and_exact_including_announce_and_last():
    g = game("ddbu", 20)
    g.shot(pins=ALL, carom=1)
    g.shot(pins=spots(1, 2, 3))  # distance and last series at once
    payload = snapshot.pack_state(g)
    assert len(payload) <= 60
    state = snapshot.unpack_state(payload)
    assert state == g.state()
    assert state["announce"] == ["distance:1", "last-series:2"]
    assert state["last_series"] == 2


def test_pack_state_of_a_finished_ceb_match_keeps_set_points():
    g = sample_game()
    assert g.finished
    state = snapshot.unpack_state(snapshot.pack_state(g))
    assert state["set_points"] is not None
    assert state == g.state()


@pytest.mark.parametrize("mangle", [
    lambda d: d[:-1], lambda d: d + b"\x00", lambda d: b"XX" + d[2:], lambda d: b"",
    lambda d: d[:7] + bytes([d[7] | 3]) + d[8:],
])
def test_damaged_saves_give_a_clear_error(mangle):
    data = snapshot.pack(sample_game())
    with pytest.raises(GameError):
        resume.unpack(mangle(data))


@pytest.mark.parametrize("data", [b"", b"\x00" * 26, b"\x03" + b"\x00" * 26, b"\xff" * 27])
def test_damaged_board_states_give_a_clear_error(data):
    with pytest.raises(GameError):
        snapshot.unpack_state(data)


def test_micropython_packs_the_same_bytes_and_resumes_the_same():
    call = ["packed_and_resumed", []]
    out = micropython_value(run_on_micropython("snapshot_cases", [call], heapsize="96K")[0])
    g = sample_game()
    assert out[0] == snapshot.pack(g)
    assert out[1] == snapshot.pack_state(g)
    assert out[2] == g.state_json()
    g.undo()
    assert out[3] == g.state_json()


def test_damaged_history_in_a_save_is_refused():
    data = bytearray(snapshot.pack(sample_game()))
    data[-4] = 9  # the last record's kind
    with pytest.raises(GameError, match="bad record"):
        resume.unpack(bytes(data))


def test_a_saved_history_is_checked_as_the_decoder_checks_a_record():
    """resume checks the stored records with the game's own check (a board reads its game
    without rules_core.events): it refuses exactly the records events.decode refuses, every
    kind and every second and fourth byte of a shot, the edges of an adjust's delta."""
    from rules_core import events
    from rules_core.common import EventError
    from rules_core.game import check_record

    def refused(check, record):
        try:
            check(record, 0)
        except EventError:
            return True
        return False

    records = [bytes((kind, a, 0, 0)) for kind in range(256) for a in (0, 1, 2, 3, 0x60, 0xFF)]
    records += [bytes((1, a, 0, c)) for a in range(256) for c in range(256)]
    records += [bytes((2, player)) + delta.to_bytes(2, "big")
                for player in range(4) for delta in (0, 1, 0x7FFF, 0x8000, 0x8001, 0xFFFF)]
    refusals = [refused(check_record, r) for r in records]
    assert refusals == [refused(events.decode, r) for r in records]
    assert 0 < sum(refusals) < len(records)


def test_a_damaged_checkpoint_makes_undo_fail_cleanly():
    g = sample_game()
    g.undo()  # reopen the match
    resumed = resume.unpack(snapshot.pack(g))
    n = len(resumed.history) // 4
    k = n - 1 - (n - 1) % 32  # start of the checkpoint undo will use
    mark = (n - 1) // 32
    chunk = resumed.history.chunks[mark // 4]  # a chunk holds 4 checkpoints, then records
    chunk[mark % 4 * 28:(mark % 4 + 1) * 28] = b"\xff" * 28
    before = (resumed.state_json(), resumed.history.tobytes())
    assert k >= 0
    with pytest.raises(GameError, match="damaged"):
        resumed.undo()
    assert (resumed.state_json(), resumed.history.tobytes()) == before


def test_the_reader_knows_the_snapshots_header_sizes():
    # rules_core.resume and snapshot hold the layouts' numbers as compile-time constants (no
    # names kept on the board): they must be the same, and those of the other modules
    import struct

    from rules_core import events, game, resume, savedstate

    assert (resume._MAGIC, resume._HEAD, resume._MAGIC_SPLIT, resume._HEAD_SPLIT) == (
        snapshot._MAGIC, snapshot._HEAD, snapshot._MAGIC_SPLIT, snapshot._HEAD_SPLIT)
    assert resume._HEAD_SIZE == struct.calcsize(snapshot._HEAD)
    assert resume._HEAD_SPLIT_SIZE == struct.calcsize(snapshot._HEAD_SPLIT)
    assert resume._CHECKPOINT_EVERY == snapshot._CHECKPOINT_EVERY == game._CHECKPOINT_EVERY
    assert (resume._SAVE_SIZE, snapshot._STATE_SIZE) == (
        savedstate.SAVE_SIZE, savedstate.STATE_SIZE)
    assert resume._RECORD_SIZE == events._RECORD_SIZE
