"""Host commands never leave the board in two minds (docs/protocol.md, "BUSY"): every
command kind sent while the setup menu or the wiring check is open, or to a board in safe
mode, on the real firmware (tests/device/host_command_cases.py, MicroPython unix port),
and two raw input timelines with host commands through the firmware's schedule."""

import json

import pytest
from helpers import micropython_value, run_on_micropython

from rules_core import Game
from tools.logger import frames

CHANGES_THE_GAME = ("new_game", "new_game_replace", "undo", "restore")
ANSWERED = {"state": ["ack", frames.CMD_STATE], "ping": ["ack", frames.CMD_PING],
            "hello": ["ack", frames.CMD_HELLO], "event": ["ack", frames.CMD_EVENT],
            "logged": ["ack", frames.CMD_LOGGED], "unknown": ["error", 2]}
BUSY = ["error", frames.linkcodes.ERR_BUSY]
NEW_GAME_REPLACE_CEB = [1, 50, 0, 50, 0, 1, 1, 1]


@pytest.fixture(scope="module")
def scenarios(tmp_path_factory):
    calls = [[name, [str(tmp_path_factory.mktemp(name))]]
             for name in ("in_the_menu", "in_the_check", "in_safe_mode")]
    calls += [["timeline", [str(tmp_path_factory.mktemp("timeline")), text, host]]
              for text, host in TIMELINES.values()]
    results = run_on_micropython("host_command_cases", calls, timeout=300)
    names = ["in_the_menu", "in_the_check", "in_safe_mode", *TIMELINES]
    return {name: json.loads(json.dumps(micropython_value(result)))
            for name, result in zip(names, results, strict=True)}


def _check_commands(out):
    commands = out["commands"]
    assert set(commands) == set(CHANGES_THE_GAME) | set(ANSWERED)
    for name in CHANGES_THE_GAME:
        assert commands[name]["answer"] == BUSY, name
    for name, want in ANSWERED.items():
        assert commands[name]["answer"] == want, name
    for name, seen in commands.items():
        # nothing the host sent changed the game, what is open, or what the players see
        assert seen["game_kept"] and seen["open_kept"] and seen["picture_kept"], name


def test_every_command_while_the_setup_menu_is_open(scenarios, hostile_report):
    out = scenarios["in_the_menu"]
    assert out["menu_picture"] == "d1    40"  # the menu opens on the distances
    _check_commands(out)
    assert out["after_carom"] == "d1    50"  # the buttons still work the menu
    assert out["menu_closed"] and out["game_picture"] != out["menu_picture"]
    # the ok after leaving is a miss, and the next shot is player 2's
    game = Game("ddbu", (40, 40))
    for pins in (0b00001, 0b00010, 0, 0b00100):
        game.shot(pins=pins)
    want = game.state()
    assert out["after"] == {"shots": want["shots"], "score": want["score"], "rules": "ddbu"}
    assert want["score"][1] > 0  # player 2 did score
    # once the menu is closed, the host's commands are carried out
    assert out["undo_after"] == [["ack", frames.CMD_UNDO], want["shots"] - 1]
    assert out["new_game_after"] == [["ack", frames.CMD_NEW_GAME], "ceb", 0]
    hostile_report("board: host commands while the menu or the check is open",
                   commands=2 * len(out["commands"]), refused_busy=2 * len(CHANGES_THE_GAME),
                   game_changed=0)


def test_every_command_while_the_wiring_check_runs(scenarios):
    out = scenarios["in_the_check"]
    assert out["check_open"] and out["shots"] == 1
    _check_commands(out)
    assert out["check_picture"] == "123_.5 CH"  # still the check: pin 4 down, its line high
    assert out["check_closed"]
    game = Game("ddbu", (40, 40))
    for pins in (0b00001, 0b10000):
        game.shot(pins=pins)
    assert out["after"] == {"shots": 2, "score": game.state()["score"]}  # play scores again
    assert out["undo_after"] == [["ack", frames.CMD_UNDO], 1]


def test_commands_to_a_board_in_safe_mode_are_never_run(scenarios):
    out = scenarios["in_safe_mode"]
    assert out["word"] == "SAFE" and out["picture"].strip() == "5AFE"  # S and 5 look alike
    assert out["commands"] == len(CHANGES_THE_GAME) + len(ANSWERED)
    assert out["written"] == 0  # no answer, no frame: the firmware is not running
    assert out["same_game"] == [True, True]  # nor was anything done later


# The two-minds symptoms as raw input timelines: a new game from the host while the menu is
# open, then the players leave the menu, play a miss with ok and player 2 shoots; and one
# while the wiring check runs, after which play must score.
TIMELINES = {
    "menu": ("0 pins up 1 2 3 4 5\n1000 pin 1 down\n1300 pin 1 up\n"
             "5000 hold ok 1000\n9000 press undo\n11000 press ok\n"
             "14000 pin 3 down\n14300 pin 3 up\n",
             [[7000, frames.CMD_NEW_GAME, 40, NEW_GAME_REPLACE_CEB],
              [7500, frames.CMD_UNDO, 41, []]]),
    "check": ("0 pins up 1 2 3 4 5\n1000 pin 1 down\n1300 pin 1 up\n"
              "5000 hold ok 1000\n7000 press ok\n7500 press ok\n8000 press ok\n"
              "8500 press ok\n9000 press carom\n9500 press ok\n"
              "20000 hold undo 1000\n23000 pin 2 down\n23300 pin 2 up\n",
              [[15000, frames.CMD_NEW_GAME, 50, NEW_GAME_REPLACE_CEB],
               [15500, frames.CMD_UNDO, 51, []]]),
}


@pytest.mark.parametrize("name", list(TIMELINES))
def test_timeline_with_host_commands_while_the_menu_or_check_is_open(scenarios, name):
    out = scenarios[name]
    assert out["answers"] == [BUSY, BUSY]
    game = Game("ddbu", (40, 40))
    shots = (0b00001, 0, 0b00100) if name == "menu" else (0b00001, 0b00010)
    for pins in shots:
        game.shot(pins=pins)
    assert json.loads(out["state"]) == game.state()
