"""Host commands while someone at the table is in the setup menu, in the wiring check or
in safe mode (tests/test_host_commands.py), MicroPython only: the real App on the
simulated board, its link a memory stream fed with commands, the display read through the
emulated chip.

A command that changes the game (NEW_GAME with or without REPLACE, UNDO, RESTORE) is
refused with ERROR 7 (BUSY) while the menu or the check is open; the others are answered as
usual; neither closes what the players see, and the buttons keep driving it.
"""

import binascii

from device import protocol_cases as cases
from device.link_firmware_cases import boot as start
from device.link_firmware_cases import knock
from device.support import play
from rules_core import events
from tools import linkcodes
from tools.sim.board.board import FLASH_MOUNT, build

HEAPSIZE = "4M"
CAROM, FOUL, OK, UNDO = 0, 1, 2, 3
NEW = bytes([1, 50, 0, 50, 0, 1, 1])  # ceb 50/50, one set, player 1 starts
REPLACE = NEW + b"\x01"
BUSY = 7


def safe_mode_board(state_dir):
    """The simulated board with its link, powered up with undo held (not booted)."""
    import os

    try:
        os.umount(FLASH_MOUNT)
    except OSError:
        pass
    sim = build(state_dir=state_dir)
    sim.board.link, stream = cases.new_link()
    sim.set_button(UNDO, True)
    return sim, stream


def press(sim, app, t, button, ms=100):
    sim.set_button(button, True)
    t = play(app, t, t + ms)
    sim.set_button(button, False)
    return play(app, t, t + 300)


def commands(app):
    """(name, kind, arguments) of every command kind a host can send, for the game on the
    board now: RESTORE and EVENT name its game and numbers that it would take."""
    game_id = bytes(app.numbering.game_id)
    count = len(app.game.history) // 4
    return [
        ("new_game", 0x81, NEW),
        ("new_game_replace", 0x81, REPLACE),
        ("undo", 0x82, b""),
        ("restore", 0x88, game_id + bytes([count + 1, 0]) + events.encode_shot(1 << 3, 0, ())),
        ("state", 0x83, b""),
        ("ping", 0x84, b""),
        ("hello", 0x85, b""),
        ("event", 0x86, game_id + bytes([1, 0])),
        ("logged", 0x87, b"\x07" * 8),
        ("unknown", 0x8F, b""),
    ]


def answer(stream, seq):
    """("ack", kind) or ("error", code) of the answer to ``seq``, or None."""
    for kind, _, payload in cases.frames_of(stream.written):
        if kind == linkcodes.ACK and payload[0] | payload[1] << 8 == seq:
            return ["ack", payload[2]]
        if kind == linkcodes.ERROR and payload[1] | payload[2] << 8 == seq:
            return ["error", payload[0]]
    return None


def try_every_command(sim, app, stream, t, seq):
    """Send each command kind once; for each: its answer, whether the game, the display
    and what is open stayed as they were."""
    out = {}
    for name, kind, args in commands(app):
        before = [app.game.history.tobytes(), app.game.state(), sim.visible(),
                  app.menu is not None, app.check is not None]
        stream.incoming += cases.command(kind, seq, args)
        t = play(app, t, t + 60)
        after = [app.game.history.tobytes(), app.game.state(), sim.visible(),
                 app.menu is not None, app.check is not None]
        out[name] = {"answer": answer(stream, seq), "game_kept": after[:2] == before[:2],
                     "picture_kept": after[2] == before[2], "open_kept": after[3:] == before[3:]}
        seq += 1
    return t, seq, out


def in_the_menu(state_dir):
    """Commands while the setup menu is open; then the buttons still work the menu, and
    once it is closed the same commands are carried out."""
    sim, app, stream = start(state_dir)
    t = play(app, 0, 3000)
    t = knock(sim, app, t, 1)
    t = knock(sim, app, t, 2)
    out = {"shots": app.game.state()["shots"]}
    t = press(sim, app, t, OK, 1000)  # hold ok: the menu
    out["menu_picture"] = sim.visible()
    t, seq, out["commands"] = try_every_command(sim, app, stream, t, 100)
    t = press(sim, app, t, CAROM)  # the buttons still drive the menu: d1 50
    out["after_carom"] = sim.visible()
    t = press(sim, app, t, UNDO)  # from the first item: leave, nothing changed
    out["menu_closed"] = app.menu is None
    out["game_picture"] = sim.visible()
    t = press(sim, app, t, OK)  # a miss: the turn passes
    t = knock(sim, app, t, 3)  # player 2's shot
    out["after"] = {"shots": app.game.state()["shots"], "score": app.game.state()["score"],
                    "rules": app.game.state()["rules"]}
    stream.incoming += cases.command(0x82, seq)  # closed: an UNDO is carried out
    t = play(app, t, t + 60)
    out["undo_after"] = [answer(stream, seq), app.game.state()["shots"]]
    stream.incoming += cases.command(0x81, seq + 1, REPLACE)
    t = play(app, t, t + 60)
    state = app.game.state()
    out["new_game_after"] = [answer(stream, seq + 1), state["rules"], state["shots"]]
    return out


def in_the_check(state_dir):
    """Commands while the wiring check runs; then it still shows the pins, leaving it works,
    and play scores again."""
    sim, app, stream = start(state_dir)
    t = play(app, 0, 3000)
    t = knock(sim, app, t, 1)
    out = {"shots": app.game.state()["shots"]}
    t = press(sim, app, t, OK, 1000)  # the menu
    for _ in range(4):  # ddbu: distance 1, distance 2, who starts, then the check
        t = press(sim, app, t, OK)
    t = press(sim, app, t, CAROM)  # "tESt yES"
    t = press(sim, app, t, OK)
    t = play(app, t, t + 10000)  # past the segment sweep
    out["check_open"] = app.check is not None
    t, seq, out["commands"] = try_every_command(sim, app, stream, t, 200)
    sim.set_spot(4, False)  # the check still reads the pins
    t = play(app, t, t + 200)
    out["check_picture"] = sim.visible()
    sim.set_spot(4, True)
    t = play(app, t, t + 200)
    t = press(sim, app, t, UNDO, 1000)  # hold undo: leave the check
    out["check_closed"] = app.check is None
    t = knock(sim, app, t, 5)  # play goes on and scores
    out["after"] = {"shots": app.game.state()["shots"], "score": app.game.state()["score"]}
    stream.incoming += cases.command(0x82, seq)
    t = play(app, t, t + 60)
    out["undo_after"] = [answer(stream, seq), app.game.state()["shots"]]
    return out


def in_safe_mode(state_dir):
    """Commands to a board started with undo held (safe mode): nothing answers them and
    nothing changes; the next normal boot has the game as it was."""
    from firmware.run import start as run_start

    sim, app, stream = start(state_dir)
    t = play(app, 0, 3000)
    t = knock(sim, app, t, 1)
    before = app.game.state_json()
    game_id = binascii.hexlify(app.numbering.game_id).decode()
    kinds = commands(app)

    sim, stream = safe_mode_board(state_dir)
    for seq, (_, kind, args) in enumerate(kinds):
        stream.incoming += cases.command(kind, 300 + seq, args)
    word = run_start(sim.board)
    out = {"word": word, "picture": sim.visible(), "written": len(stream.written),
           "commands": len(kinds)}

    sim, app, stream = start(state_dir)  # a normal boot: the commands were never run
    play(app, 0, 3000)
    out["same_game"] = [app.game.state_json() == before,
                        binascii.hexlify(app.numbering.game_id).decode() == game_id]
    return out


def _timeline_play(sim, app, stream, text, host):
    """Play a raw input timeline (tools.sim.board.timeline, as tools.sim does) through the
    firmware's schedule, with host commands [(time, kind, seq, args)] put on the link at
    their times. Returns the answers to them and the final state."""
    from firmware.run import tick
    from tools.sim.board import timeline

    levels = timeline.Levels(timeline.parse(text))
    t = 0
    pending = list(host)
    while t <= levels.end_ms + 5000:
        sim.set_levels(*levels.at(t))
        while pending and pending[0][0] <= t:
            _, kind, seq, args = pending.pop(0)
            stream.incoming += cases.command(kind, seq, args)
        tick(app, t)
        t += 5
    return {"answers": [answer(stream, seq) for _, _, seq, _ in host],
            "state": app.game.state_json(), "picture": sim.visible()}


def timeline(state_dir, text, host):
    """A whole timeline with host commands through the real firmware (see _timeline_play);
    ``host``: [[time, kind, seq, [argument bytes]]]."""
    sim, app, stream = start(state_dir)
    return _timeline_play(sim, app, stream, text, [(t, k, s, bytes(a)) for t, k, s, a in host])
