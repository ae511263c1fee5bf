"""Play a game through boardlib.link over a pty, on the MicroPython unix port.

    micropython tools/sim/board/linkplay.py DEVICE_PTY PLAN.json

PLAN.json: {"rules": "ddbu", "distance": [40, 40], "sets": 1, "first": 1, "teams": 0,
"game": 1, "game_id": "16 hex digits" (random when missing), "boot_id": "8 hex digits",
"shots": [[pins_mask, carom, ["foul"]], "undo", ...], "interval_ms": 20,
"linger_ms": 2000, "heartbeat_ms": 500, "boot_text": "..."}.

The board's side of the link without the rest of the firmware: it answers host commands
(new game, undo, state, ping) and, between them, plays the planned shots in real time,
sending each shot and the state after it. It lingers after the last shot so that the host
can still ask for the state, then prints the final board state as one JSON line.
"""

import binascii
import json
import os
import sys
import time

from boardlib import link
from rules_core import Game, GameError
from rules_core.settings import RULES_IDS
from rules_core.snapshot import pack_state
from tools import linkcodes
from tools.sim.board.uart import PtyUART


def _send_shot(lk, game, record, now):
    last = game.state()["last"]
    lk.send_event(game.history.count, record, last["player"], last["points"], last["to"],
                  now)


def _state(lk, game, now):
    lk.send_state(pack_state(game), now, game.history)


def _answer(lk, kind, game, now):
    """Carry out a host command; returns the game (a new one after CMD_NEW_GAME)."""
    if kind == linkcodes.CMD_NEW_GAME:
        if game.history.count and not game.finished and not lk.replace:
            lk.nack(lk.cmd_seq, linkcodes.ERR_ASKED)  # nobody here to confirm: refused
            return game
        game = Game(lk.rules, (lk.distance[0], lk.distance[1]), lk.sets, lk.first, lk.teams)
        lk.game += 1
        lk.game_id[:] = os.urandom(8)
        lk.ack(lk.cmd_seq)
    elif kind == linkcodes.CMD_UNDO:
        try:
            game.undo()
        except GameError:
            lk.nack(lk.cmd_seq, linkcodes.ERR_REFUSED)
            return game
        lk.ack(lk.cmd_seq)
        lk.send_undo(game.history.count, now)
    elif kind == linkcodes.CMD_STATE:
        lk.ack(lk.cmd_seq)
    elif kind == linkcodes.CMD_EVENT:
        index = lk.cmd_index
        if lk.cmd_game != lk.game_id or not 0 < index <= game.history.count:
            lk.nack(lk.cmd_seq, linkcodes.ERR_REFUSED)
        else:
            lk.ack(lk.cmd_seq)
            lk.send_event(index, game.history.record(index - 1), 0, 0, 0, now, True)
        return game
    elif kind in (linkcodes.CMD_PING, linkcodes.CMD_LOGGED):
        lk.ack(lk.cmd_seq)
        return game
    else:
        return game
    _state(lk, game, now)
    return game


def play(device_path, plan):
    uart = PtyUART(device_path)
    now = time.ticks_ms()
    boot = binascii.unhexlify(plan["boot_id"]) if "boot_id" in plan else None
    lk = link.Link(uart, now, heartbeat_ms=plan.get("heartbeat_ms", 500), board_id=b"sim",
                   boot_id=boot)
    if plan.get("boot_text"):
        uart.write(plan["boot_text"].encode())
    lk.send_hello("linkplay", "PWR", now)
    distance = plan.get("distance", [40, 40])
    game = Game(plan.get("rules", RULES_IDS[0]), (distance[0], distance[1]), plan.get("sets", 1),
                plan.get("first", 1), plan.get("teams", 0))
    lk.game = plan.get("game", 1)
    lk.game_id[:] = binascii.unhexlify(plan["game_id"]) if "game_id" in plan else os.urandom(8)
    _state(lk, game, now)
    shots = plan.get("shots", [])
    interval = plan.get("interval_ms", 20)
    next_at = time.ticks_add(now, interval)
    done_at = None
    index = 0
    while True:
        now = time.ticks_ms()
        while True:  # every command that has arrived is answered before the next shot
            kind = lk.poll(now)
            if kind == linkcodes.NONE:
                break
            game = _answer(lk, kind, game, now)
        if index < len(shots) and time.ticks_diff(now, next_at) >= 0:
            event = shots[index]
            index += 1
            next_at = time.ticks_add(now, interval)
            try:
                if event == "undo":
                    game.undo()
                    lk.send_undo(game.history.count, now)
                else:
                    record = game.shot(pins=event[0], carom=event[1], fouls=tuple(event[2]))
                    _send_shot(lk, game, record, now)
            except GameError as err:
                lk.send_error(linkcodes.ERR_REFUSED, str(err))
            _state(lk, game, now)
        elif index >= len(shots) and done_at is None:
            done_at = time.ticks_add(now, plan.get("linger_ms", 2000))
        if done_at is not None and time.ticks_diff(now, done_at) >= 0:
            break
        time.sleep_ms(2)
    print(game.state_json())
    sys.stdout.write("link tx=%d rx=%d bad=%d\n" % (lk.tx_frames, lk.rx_frames, lk.rx_bad))


if __name__ == "__main__":
    with open(sys.argv[2]) as f:
        play(sys.argv[1], json.load(f))
