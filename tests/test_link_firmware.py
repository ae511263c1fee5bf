"""The whole firmware's side of the link, on the MicroPython unix port: commands repeated
after a lost answer run once, a new game from the host never silently replaces an
unfinished one, the replaced game stays on flash until the host has logged it, and every
game has its own identity across reboots and re-flashing (docs/protocol.md). The device
side is tests/device/link_firmware_cases.py."""

import struct

from helpers import micropython_value, run_on_micropython

from tools.logger import frames
from tools.records.replay import record_fields


def _frames(hexwire):
    return [(kind, seq, frames.parse(kind, payload))
            for kind, seq, payload in frames.FrameReader().feed(bytes.fromhex(hexwire))]


def _answers(parsed, ref):
    return [(kind, f.get("code", f.get("command"))) for kind, _, f in parsed
            if kind in (frames.ACK, frames.ERROR) and f["ref"] == ref]


def test_commands_new_games_and_identities_on_the_firmware(tmp_path):
    (result,) = run_on_micropython("link_firmware_cases",
                                   [["scenario", [str(tmp_path / "flash")]]])
    out = micropython_value(result)
    first = _frames(out["wire1"])

    # A repeated UNDO (same seq, same bytes) is answered twice, the same way, and undoes once.
    assert out["shots_before_undo"] == 2 and out["shots_after_repeated_undo"] == 1
    assert _answers(first, 7) == [(frames.ACK, 0x82), (frames.ACK, 0x82)]
    assert len([f for k, _, f in first if k == frames.UNDO]) == 1

    # A new game over an unfinished one asks the players; anything but ok keeps the game.
    assert out["asked_picture"] == "nEW   oK"  # "k" and "K" share a shape
    assert out["after_refusal"] == [1, True]
    assert _answers(first, 8) == [(frames.ERROR, 6), (frames.ERROR, 5)]
    assert out["after_ok"][0] == 0 and out["after_ok"][1] != out["first_id"]
    assert _answers(first, 9) == [(frames.ERROR, 6)]
    assert out["kept_id"] == out["first_id"]
    states = [f for k, _, f in first if k == frames.STATE]
    assert {s["game_id"] for s in states} == {out["first_id"], out["after_ok"][1]}

    # The replaced game survives a reboot until the host says it has it, and its events
    # can be asked for by number; the game being played keeps its identity.
    second = _frames(out["wire2"])
    assert out["after_reboot"] == [out["after_ok"][1], 1]
    (resent,) = [f for k, _, f in second if k == frames.SHOT and f["resent"]]
    assert resent["game_id"] == out["first_id"] and resent["index"] == 1
    assert record_fields(resent["record"])["pins"] == [1]
    assert _answers(second, 10) == [(frames.ACK, 0x86)]
    assert _answers(second, 11) == [(frames.ACK, 0x87)]
    assert out["kept_after_logged"] == [True, []]

    # REPLACE: the host said so explicitly.
    assert out["after_replace"][0] == 0 and out["after_replace"][1] != out["after_ok"][1]
    assert _answers(second, 12) == [(frames.ACK, 0x81)]
    assert struct.calcsize("<BHHBB") + 1 == len(frames.new_game_args("ddbu", (40, 40)))


def test_restore_appends_only_the_next_event_of_the_current_game(tmp_path):
    (result,) = run_on_micropython("link_firmware_cases",
                                   [["restore", [str(tmp_path / "flash")]]])
    out = micropython_value(result)
    parsed = _frames(out["wire"])
    # A wrong game, an index past the end and one already held: refused, nothing changed.
    assert out["refused"][0] == 1
    for ref in (20, 21, 22):
        assert _answers(parsed, ref) == [(frames.ERROR, 5)]
    # The right ones, in order: appended once (the repeat is answered, not run again),
    # sent as resent events, and on flash after a reboot.
    assert _answers(parsed, 23) == [(frames.ACK, 0x88), (frames.ACK, 0x88)]
    assert _answers(parsed, 24) == [(frames.ACK, 0x88)]
    history = out["restored"][2]
    assert out["restored"][0] == 3 and len(history) == 24
    shots = [f for k, _, f in parsed if k == frames.SHOT and f["resent"]]
    assert [(s["index"], record_fields(s["record"])["pins"]) for s in shots] == [
        (2, [2]), (3, [3])]
    assert out["restored"][1] != out["refused"][1]
    assert out["after_reboot"] == [history, out["restored"][1]]
