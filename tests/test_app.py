"""The application on the simulated board, on the MicroPython unix port: boot notices,
bad data on flash, a stuck sensor, pins left lying past the stuck time, the setup menu
and the watchdog.

Each scenario runs the real firmware (`firmware.app.App` on `tools.sim.board`) and reads
the display through the emulated chips, i.e. what a person at the table would see.
"""

import json

import pytest
from helpers import micropython_value, run_on_micropython, table_room

pytestmark = pytest.mark.long(9)

SCENARIOS = [("boot_after_watchdog",), ("corrupt_config",), ("cut_off_journal", "ab"),
             ("cut_off_journal", "b"),
             ("dark_sensor",), ("pins_left_lying", "stood up"), ("pins_left_lying", "ok"),
             ("full_flash", 999, 40), ("setup_menu",), ("watchdog", False), ("watchdog", True),
             ("shot_allocates_nothing",), ("quiet_polls",),
             ("pins_read_at_changes",), ("steps_while_pins_change",),
             ("pins_chatter_between_steps",), ("attribute_tables",)]


@pytest.fixture(scope="module")
def scenarios(tmp_path_factory):
    """Every scenario of tests/device/app_cases.py, each in a state folder of its own, all
    in one unix-port process; results as JSON reads them (tuples become lists)."""
    calls = [[name, [str(tmp_path_factory.mktemp(name)), *args]] for name, *args in SCENARIOS]
    results = run_on_micropython("app_cases", calls)
    return {scenario: json.loads(json.dumps(micropython_value(result)))
            for scenario, result in zip(SCENARIOS, results, strict=True)}


def test_boot_shows_the_reset_cause_then_the_scores(scenarios):
    out = scenarios[("boot_after_watchdog",)]
    # a watchdog reset says so for a moment; then the scores, player 1 at the table
    assert out[0] == "r5t  Wdt"  # "S" reads as "5" on seven segments
    assert out[-1] == " .  0   0"  # the dot of the outer left digit: player 1 to play


def test_corrupt_config_falls_back_to_defaults_and_says_err_31(scenarios):
    out = scenarios[("corrupt_config",)]
    assert "Err   31" in out["pictures"]
    assert out["settle"] == 1500 and out["rules"] == "ddbu"  # the defaults


def test_cut_off_journal_resumes_the_intact_prefix_and_says_err_41(scenarios):
    out = scenarios[("cut_off_journal", "ab")]
    assert out["before"] == [2 + 4 + 2, 0]
    assert out["after"] == [2 + 4, 0]  # the last record was cut: the two before it stand
    assert any(p.startswith("Err") and p.endswith("41") for p in out["pictures"])
    assert out["errors"] == [[18, "Err 41"]]  # and the host is told: STORAGE, the code


def test_one_damaged_copy_of_the_journal_costs_nothing(scenarios):
    out = scenarios[("cut_off_journal", "b")]
    assert out["after"] == out["before"] == [2 + 4 + 2, 0]  # the other copy has it all
    assert not any(p.startswith("Err") for p in out["pictures"])
    assert out["errors"] == []


def test_a_sensor_dark_from_power_up_shows_err_1n_and_never_scores(scenarios):
    out = scenarios[("dark_sensor",)]
    assert any(p.startswith("Err") and p.endswith("12") for p in out["pictures"])
    assert out["stuck"] == [0, 0]  # the dark spot scored nothing, nor passed the turn
    assert out["after"] == [2, 0] and out["shots"] == 1  # only pin 1 counted


@pytest.mark.parametrize("end", ["stood up", "ok"])
def test_pins_left_lying_past_the_stuck_time_say_err_1n_and_still_score(scenarios, end):
    out = scenarios[("pins_left_lying", end)]
    assert any(p.startswith("Err") and p.endswith("12") for p in out["pictures"])
    assert out["stuck"] == [0, 0]  # the shot is still open: nothing scored, no turn passed
    assert out["scored"] == [4, 0]  # pins 2 and 3: what fell scores (ddbu, 2 points each)
    assert not any(p.startswith("Err") for p in out["after"])  # standing again: no fault
    assert out["score"] == [6, 0] and out["shots"] == 2  # then pin 1 alone: 2 more


def test_a_full_flash_says_err_43_keeps_scoring_and_recovers(scenarios, hostile_report):
    out = scenarios[("full_flash", 999, 40)]
    hostile_report("flash: full while scoring", shots=len(out["scores"]),
                   storage_errors_sent=len(out["errors"]),
                   recovered=int(out["error_after"] == 0 and out["same_after_reboot"]))
    assert out["full_errno"] == 28  # the filler really ran the flash out of room
    # every shot on the full flash still scored, as the rules core scores them
    from rules_core import Game

    game = Game("ddbu", distance=(999, 999))
    for _ in range(40):
        game.shot(pins=0b00011)
    expected = []
    for pins in (0b00001, 0b00110, 0b00100, 0b11000) * 4:
        game.shot(pins=pins)
        expected.append(game.state()["score"])
    assert out["scores"] == [list(s) for s in expected]
    assert out["error_while_full"] == 43
    assert "Err   43" in out["pictures"]  # shown in turns with the scores
    assert any(str(out["scores"][-1][0]) in p for p in out["pictures"]), out["pictures"]
    assert out["errors"] == [[18, "Err 43"]]  # the host is told once
    assert out["error_after"] == 0  # room again: the game was stored, the error cleared
    assert not any(p.startswith("Err") for p in out["after"])
    assert out["same_after_reboot"]  # everything scored while full is on flash now


def test_setup_menu_starts_a_new_game_from_the_buttons(scenarios):
    out = scenarios[("setup_menu",)]
    assert out["pictures"][0] == "d1    40"  # the distances first: changed most
    assert out["pictures"][1] == "d1    50"
    assert out["pictures"][2] == "rULEddbu"
    assert out["pictures"][3] == "rULE CEb"
    assert out["pictures"][4] == "5Et5   3"  # "S" and "5" share a shape on 7 segments
    assert out["pictures"][5] == "PLAy 2-2"
    assert out["pictures"][6] == "nEW   no"
    assert out["pictures"][7] == "nEW  yE5"
    # The team match: the scores with the turn dot (player 1 opens) and the marked-ball
    # ring on player 2's half (CEB 21.1), and in turns the players at the table (CEB 28).
    assert set(out["pictures"][8:]) == {" .  0\u00b0  0", " . A1\u00b0 b1"}
    assert len(out["pictures"][8:]) >= 3
    assert out["rules"] == "ceb" and out["distance"] == [50, 40] and out["best_of"] == 3
    assert out["members"] == [1, 1]
    assert out["menu"] is False


@pytest.mark.parametrize("broken", [False, True])
def test_watchdog_is_fed_only_while_every_task_runs(scenarios, broken):
    out = scenarios[("watchdog", broken)]
    if broken:
        assert out["feeds"] == 0 and out["errors"] > 0  # the watchdog will reset the board
    else:
        assert out["feeds"] >= 2 and out["errors"] == 0  # a 2 s watchdog: fed every second


def test_a_scored_shot_allocates_nothing(scenarios):
    # docs/performance.md: nothing on the event path comes out of the heap (a board whose
    # heap is full of loaded code pays for every allocation with a search)
    shots, score, scores_shown = scenarios[("shot_allocates_nothing",)]
    assert shots == 1 and score == [8, 0]  # four shots of a pin: the series goes on
    assert scores_shown  # the shot's message shown, and the scores again after it


def test_pins_are_read_only_when_they_changed(scenarios):
    # docs/performance.md: the pins' interrupts say when a pin changed; a poll at a timer's
    # end (the glitch filter's, a release's debounce) reads none and uses the levels
    # read last
    out = scenarios[("pins_read_at_changes",)]
    assert out["shots"] == 1 and out["score"][0] > 0  # the pin scored, at ok's release
    assert out["spots_read"] == 2  # the fall and the stand, not the filter's two ends
    assert out["buttons_read"] == 2  # ok pressed and let go, not the debounce's end


def test_the_shots_assembler_hears_only_what_the_glitch_filter_passed(scenarios):
    # docs/performance.md: a poll whose report the filter has not passed yet (a pin
    # falling or standing, counted 40 ms later) moves nothing in the shot's assembler
    out = scenarios[("quiet_polls",)]
    assert out["shots"] == 1 and out["score"][0] > 0  # the pin scored
    assert out["spots_told"] == 2  # once counted down, once standing again


def test_the_apps_button_kinds_are_the_buttons():
    # firmware.app keeps boardlib.inputs' PRESS and HOLD as constants of its own (no
    # lookup of an imported name per press): they must be the inputs' own
    from boardlib import inputs
    from firmware import app

    assert (app._PRESS, app._HOLD) == (inputs.PRESS, inputs.HOLD)


def test_a_step_with_only_the_inputs_due_runs_nothing_else(scenarios):
    # docs/performance.md: the other parts' soonest time is kept as one, so a step that
    # only a pin's change or an input's timer woke polls the inputs and returns; the
    # watchdog is still fed at the first step a second after its last feed
    out = scenarios[("steps_while_pins_change",)]
    assert out["polls"] >= 60  # each change, and the glitch filter's end after it
    assert out["rest"] < out["polls"] // 2  # the display, link and upkeep when due only
    assert out["feeds"] == 3  # 3 s of changes: fed every second, as before


def test_a_chattering_pin_between_two_steps_costs_no_memory_and_one_read(scenarios):
    # firmware/app.py: a pin's interrupt handler is a deque's append (C: no Python call at
    # each change of a pin), the deque holding one entry at most, "changed"
    out = scenarios[("pins_chatter_between_steps",)]
    assert out["allocated"] is False  # 1000 interrupts with the heap locked
    assert out["held"] == 1  # bounded: one entry, however often the line changed
    assert out["reads"] == 1 and out["left"] == 0  # the next step read the spots once
    assert out["buttons"] == 0  # and no button is taken as changed


def test_the_app_class_dict_stays_within_47_slots():
    """A networked board on a stock ESP32 heap makes the App class at the end of loading
    its code, when the heap is most broken up: its dict grows a table at a time (py/map.c:
    ... 37, 47, 59 slots of 8 bytes), and the 472-byte table of 59 slots was not there
    (docs/performance.md, "The stock heap"). MicroPython's class dict holds the methods,
    the class attributes, __module__ and __qualname__."""
    from firmware.app import App

    entries = [name for name in vars(App) if not name.startswith("__")] + ["__module__",
                                                                          "__qualname__"]
    assert len(entries) <= 47, len(entries)


def test_the_app_keeps_at_most_61_attributes():
    """The App's own dict grows as its attributes are set, a table at a time (py/map.c: ...
    47, 59, 73 slots of 8 bytes). The board's App has 60 or 61 (with a buzzer): the
    584-byte table of 73, which a networked board on a stock ESP32 heap makes
    (tests/test_net_versions.py), with room left: a name the table does not hold, as
    every method's, is looked for in it up to an empty slot first, and a full table is
    searched whole (docs/performance.md, "The App's table with room"). A 74th would ask
    for 776 bytes. Counted over every attribute the class's code sets, those set only
    later (a buzzer's module, the host's question) too."""
    import ast
    import os

    with open(os.path.join(os.path.dirname(__file__), "..", "firmware", "app.py")) as f:
        tree = ast.parse(f.read())
    app = next(node for node in tree.body if isinstance(node, ast.ClassDef)
               and node.name == "App")
    names = {node.attr for node in ast.walk(app) if isinstance(node, ast.Attribute)
             and isinstance(node.value, ast.Name) and node.value.id == "self"
             and isinstance(node.ctx, ast.Store)}
    assert len(names) <= 61, sorted(names)


def test_the_objects_a_shot_goes_through_keep_room_in_their_attribute_tables(scenarios):
    # docs/performance.md, "Attribute tables with room": the link's 47 names filled its
    # table of 47, which was searched whole at every frame it sent
    tables = scenarios[("attribute_tables",)]
    assert set(tables) == {"App", "Link", "ShotAssembler", "SpotSensors", "Buttons", "Game",
                           "Screens", "GameStore", "Display", "TM1637"}
    for name, (kind, count) in tables.items():
        assert kind == name  # the board's own classes, not stand-ins
        assert table_room(count) is None, "%s: %s" % (name, table_room(count))
