"""Play a game through boardlib.link over a pty, on the MicroPython unix port.

    micropython tools/simboard/linkplay.py DEVICE_PTY PLAN.json

PLAN.json: {"rules": "ddbu", "distance": [40, 40], "sets": 1, "first": 1, "teams": 0,
"game": 1,
"shots": [[pins_mask, carom, ["foul"]], "undo", ...], "interval_ms": 20,
"linger_ms": 2000, "heartbeat_ms": 500, "boot_text": "..."}.

The board's side of the link without the rest of the firmware: it answers host commands
(new game, undo, state, ping) and, between them, plays the planned shots in real time,
sending each shot and the state after it. It lingers after the last shot so that the host
can still ask for the state, then prints the final board state as one JSON line.
"""

import json
import sys
import time

from boardlib import link
from rules_core import Game, GameError
from rules_core.snapshot import pack_state
from tools.simboard.uart import PtyUART


def _send_shot(lk, game, pins, carom, fouls, now):
    state = game.state()
    last = state["last"]
    lk.send_shot(state["shots"], last["player"], last["points"], last["to"], pins, carom,
                 link.foul_mask(fouls), now)


def _answer(lk, kind, game, now):
    """Carry out a host command; returns the game (a new one after CMD_NEW_GAME)."""
    if kind == link.CMD_NEW_GAME:
        game = Game(lk.rules, (lk.distance[0], lk.distance[1]), lk.sets, lk.first)
        lk.game += 1
        lk.ack(lk.cmd_seq)
    elif kind == link.CMD_UNDO:
        try:
            game.undo()
        except GameError:
            lk.nack(lk.cmd_seq, link.ERR_REFUSED)
            return game
        lk.ack(lk.cmd_seq)
    elif kind == link.CMD_STATE:
        lk.ack(lk.cmd_seq)
    elif kind == link.CMD_PING:
        lk.ack(lk.cmd_seq)
        return game
    else:
        return game
    lk.send_state(pack_state(game), now)
    return game


def play(device_path, plan):
    uart = PtyUART(device_path)
    now = time.ticks_ms()
    lk = link.Link(uart, now, heartbeat_ms=plan.get("heartbeat_ms", 500), board_id=b"sim")
    if plan.get("boot_text"):
        uart.write(plan["boot_text"].encode())
    lk.send_hello("linkplay", "PWR", now)
    distance = plan.get("distance", [40, 40])
    game = Game(plan.get("rules", "ddbu"), (distance[0], distance[1]), plan.get("sets", 1),
                plan.get("first", 1), plan.get("teams", 0))
    lk.game = plan.get("game", 1)
    lk.send_state(pack_state(game), now)
    shots = plan.get("shots", [])
    interval = plan.get("interval_ms", 20)
    next_at = time.ticks_add(now, interval)
    done_at = None
    index = 0
    while True:
        now = time.ticks_ms()
        game = _answer(lk, lk.poll(now), game, now)
        if index < len(shots) and time.ticks_diff(now, next_at) >= 0:
            event = shots[index]
            index += 1
            next_at = time.ticks_add(now, interval)
            try:
                if event == "undo":
                    game.undo()
                else:
                    game.shot(pins=event[0], carom=event[1], fouls=tuple(event[2]))
                    _send_shot(lk, game, event[0], event[1], event[2], now)
            except GameError as err:
                lk.send_error(link.ERR_REFUSED, str(err))
            lk.send_state(pack_state(game), now)
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
