"""Raw input timelines made from shots: what a player at the table would do.

    from tools.sim.timelines import Shot, build
    shots = [Shot(pins=(1, 3), carom="carom"), Shot(), Shot(fouls=("foul",)), "undo"]
    timeline, script = build("ceb", shots, distance=(40, 40))

`build` returns the timeline text (CONTRACT §4) that knocks the pins over, stands them up
and works the buttons, and the shot script (CONTRACT §2) of the same game, so a test or a
bench can run one through the firmware and the other through `tools.replay` and compare.
Each shot gets `gap_ms` of table time: pins fall 100 ms apart, are stood up 300 ms after the
last fall, buttons are pressed while the balls roll, and the board is left alone until the
shot has ended by itself (the settle time) before the next one starts.
"""

import random
from dataclasses import dataclass, field

from boardlib.shot import BUTTON_NAMES
from rules_core.settings import CASINO, has, second_foul

HOLD_MS = 1000


@dataclass
class Shot:
    pins: tuple = ()
    carom: str = ""  # "", "carom" or "casino"
    fouls: tuple = field(default_factory=tuple)  # "foul" (press) or the second code (hold)


def _shot_line(shot):
    words = ["shot"]
    if shot.pins:
        words.append("pins=" + ",".join(str(p) for p in sorted(shot.pins)))
    if shot.carom:
        words.append(shot.carom)
    if shot.fouls:
        words.append("foul=" + ",".join(shot.fouls))
    return " ".join(words)


def build(rules, events, distance=(40, 40), sets=1, first=1, gap_ms=5000, start_ms=1000,
          teams=0):
    """(timeline text, shot script text) for a list of Shot and "undo" events; teams=1: a
    ceb match of two-man teams."""
    timeline = ["0 pins up 1 2 3 4 5"]
    script = [
        "rules %s" % rules,
        "distance %d %d" % tuple(distance),
        "sets %d" % sets,
        "first %d" % first,
    ] + (["teams 1"] if teams else [])
    t = start_ms
    for event in events:
        if event == "undo":
            timeline.append("%d press undo" % t)
            script.append("undo")
            t += gap_ms
            continue
        marks = []
        if event.carom == "carom":
            marks.append("press carom")
        elif event.carom == "casino":
            marks.append("hold carom %d" % HOLD_MS)
        for code in event.fouls:
            marks.append("press foul" if code == "foul" else "hold foul %d" % HOLD_MS)
        at = t
        for pin in sorted(event.pins):
            timeline.append("%d pin %d down" % (at, pin))
            at += 100
        if event.pins:
            timeline.append("%d pins up 1 2 3 4 5" % (at + 200))
        at = t + 50
        for mark in marks:
            timeline.append("%d %s" % (at, mark))
            at += HOLD_MS + 200 if mark.startswith("hold") else 200
        if not event.pins and not marks:
            timeline.append("%d press ok" % t)
        timeline.sort(key=lambda line: int(line.split()[0]))
        script.append(_shot_line(event))
        t += gap_ms
    return "\n".join(timeline) + "\n", "\n".join(script) + "\n"


def random_game(rules, seed, length=40, distance=(40, 40), sets=1, first=1):
    """A random but legal game: stops once the game is over, with undos now and then."""
    from rules_core import Game

    rng = random.Random(seed)
    game = Game(rules, distance=distance, sets=sets, first=first)
    second = second_foul(rules)
    events = []
    while len(events) < length and not game.finished:
        if game.shots and rng.random() < 0.08:
            game.undo()
            events.append("undo")
            continue
        pins = tuple(p for p in range(1, 6) if rng.random() < 0.25)
        carom = rng.choice(("", "", "", "carom", "casino" if has(rules, CASINO) else "carom"))
        fouls = ()
        r = rng.random()
        if r < 0.08:
            fouls = ("foul",)
        elif r < 0.12:
            fouls = (second,)
        shot = Shot(pins, carom, fouls)
        mask = sum(1 << (p - 1) for p in pins)
        game.shot(pins=mask, carom={"": 0, "carom": 1, "casino": 2}[carom], fouls=fouls)
        events.append(shot)
    return events


def random_raw(seed, count, glitch_share=0.3, hold_share=0.2, gap_ms=40):
    """A timeline of `count` random raw inputs: pins falling, wobbling and standing up at
    random, buttons pressed and held (the menu included), as a careless table would.

    Mean spacing `gap_ms`; a button is never pressed again while it is still down."""
    rng = random.Random(seed)
    lines = ["0 pins up 1 2 3 4 5"]
    standing = [True] * 5
    busy_until = [0, 0, 0, 0]
    buttons = BUTTON_NAMES
    t = 0
    for _ in range(count):
        t += int(rng.expovariate(1.0 / gap_ms)) + 1
        r = rng.random()
        if r < 0.7:
            spot = rng.randrange(5)
            if rng.random() < glitch_share and standing[spot]:
                lines.append("%d pin %d down" % (t, spot + 1))  # a wobble or a glitch
                t += rng.randrange(1, 60)
                lines.append("%d pin %d up" % (t, spot + 1))
            else:
                standing[spot] = not standing[spot]
                lines.append("%d pin %d %s" % (t, spot + 1, "up" if standing[spot] else "down"))
        else:
            i = rng.randrange(4)
            if busy_until[i] >= t:
                continue
            if rng.random() < hold_share:
                held = rng.randrange(800, 2500)
                lines.append("%d hold %s %d" % (t, buttons[i], held))
                busy_until[i] = t + held
            else:
                lines.append("%d press %s" % (t, buttons[i]))
                busy_until[i] = t + 100
    return "\n".join(lines) + "\n"
