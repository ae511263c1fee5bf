"""The whole firmware's side of the link (tests/test_link_firmware.py), MicroPython only:
the real App on the simulated board, its link a memory stream fed with commands."""

import binascii
import os

from device import protocol_cases as cases
from device.support import play
from firmware.app import App
from firmware.boards.esp32_devkit import DATA_DIR
from tools.sim.board.board import FLASH_MOUNT, build

HEAPSIZE = "4M"
CAROM, FOUL, OK, UNDO = 0, 1, 2, 3
NEW = bytes([0, 40, 0, 40, 0, 1, 1])  # ddbu 40/40, one set, player 1 starts


def files_under(path):
    """Every file below `path` (a store keeps its copies in folders of their own)."""
    out = []
    for name in os.listdir(path):
        if os.stat(path + "/" + name)[0] & 0x4000:  # a folder
            out += files_under(path + "/" + name)
        else:
            out.append(name)
    return out


def boot(state_dir):
    try:
        os.umount(FLASH_MOUNT)
    except OSError:
        pass
    lk, stream = cases.new_link()
    sim = build(state_dir=state_dir)
    sim.board.link = lk
    app = App(sim.board)
    app.boot(0)
    return sim, app, stream


def knock(sim, app, t, spot):
    sim.set_spot(spot, False)
    t = play(app, t, t + 300)
    sim.set_spot(spot, True)
    return play(app, t, t + 3000)


def press(sim, app, t, button):
    sim.set_button(button, True)
    t = play(app, t, t + 100)
    sim.set_button(button, False)
    return play(app, t, t + 300)


def send(app, stream, t, kind, seq, args=b""):
    stream.incoming += cases.command(kind, seq, args)
    return play(app, t, t + 50)


def wire(stream):
    return binascii.hexlify(stream.written).decode()


def scenario(state_dir):
    """Repeated undo, new games asked and confirmed, the kept game, REPLACE."""
    out = {}

    sim, app, stream = boot(state_dir)
    t = play(app, 0, 3000)
    out["first_id"] = binascii.hexlify(app.numbering.game_id).decode()
    t = knock(sim, app, t, 1)
    t = knock(sim, app, t, 3)
    out["shots_before_undo"] = app.game.state()["shots"]
    t = send(app, stream, t, 0x82, 7)
    t = send(app, stream, t, 0x82, 7)          # the host did not hear the answer: asks again
    out["shots_after_repeated_undo"] = app.game.state()["shots"]

    t = send(app, stream, t, 0x81, 8, NEW)     # a new game over the unfinished one
    out["asked_picture"] = sim.visible()
    t = press(sim, app, t, UNDO)               # anything but ok: the players keep their game
    out["after_refusal"] = [app.game.state()["shots"], sim.visible() != out["asked_picture"]]
    t = send(app, stream, t, 0x81, 9, NEW)
    t = press(sim, app, t, OK)                 # ok: the new game starts
    out["after_ok"] = [app.game.state()["shots"], binascii.hexlify(app.numbering.game_id).decode()]
    kept_id = bytes(app.kept_store.codec.game_id)
    out["kept_id"] = binascii.hexlify(kept_id).decode()
    out["wire1"] = wire(stream)

    # Reboot before the host has logged it: the replaced game is still there.
    sim, app, stream = boot(state_dir)
    t = play(app, 0, 3000)
    out["after_reboot"] = [binascii.hexlify(app.numbering.game_id).decode(),
                           app.kept is not None and app.kept.shots]
    t = send(app, stream, t, 0x86, 10, kept_id + bytes([1, 0]))   # its event 1, by number
    t = send(app, stream, t, 0x87, 11, kept_id)                   # logged: it may go
    out["kept_after_logged"] = [app.kept is None, files_under(FLASH_MOUNT + DATA_DIR + "-kept")]
    t = knock(sim, app, t, 2)
    t = send(app, stream, t, 0x81, 12, NEW + b"\x01")          # REPLACE: no question asked
    out["after_replace"] = [app.game.state()["shots"],
                            binascii.hexlify(app.numbering.game_id).decode()]
    out["wire2"] = wire(stream)
    return out


def restore(state_dir):
    """CMD_RESTORE: only the current game's next event is appended; anything else,
    refused, changes nothing; a repeat (same seq) is carried out once."""
    from rules_core import events

    out = {}
    sim, app, stream = boot(state_dir)
    t = play(app, 0, 3000)
    t = knock(sim, app, t, 1)
    game_id = bytes(app.numbering.game_id)
    two = events.encode_shot(1 << 1, 0, ())   # pin 2 falls
    three = events.encode_shot(1 << 2, 0, ())  # pin 3 falls
    t = send(app, stream, t, 0x88, 20, b"\x01" * 8 + bytes([2, 0]) + two)  # another game
    t = send(app, stream, t, 0x88, 21, game_id + bytes([3, 0]) + two)      # not the next
    t = send(app, stream, t, 0x88, 22, game_id + bytes([1, 0]) + two)      # already held
    out["refused"] = [len(app.game.history) // 4, app.game.state()["score"]]
    t = send(app, stream, t, 0x88, 23, game_id + bytes([2, 0]) + two)
    t = send(app, stream, t, 0x88, 23, game_id + bytes([2, 0]) + two)      # asked again
    t = send(app, stream, t, 0x88, 24, game_id + bytes([3, 0]) + three)
    out["restored"] = [len(app.game.history) // 4, app.game.state()["score"],
                       binascii.hexlify(app.game.history.tobytes()).decode()]
    out["wire"] = wire(stream)
    sim, app, stream = boot(state_dir)                                     # journaled
    out["after_reboot"] = [binascii.hexlify(app.game.history.tobytes()).decode(),
                           app.game.state()["score"]]
    return out
