"""Shot assembly scenarios: timelines and raw levels through the real input conditioning.

tests/test_shot.py runs them on CPython and, all in one process, on the MicroPython unix
port, and compares the results with values worked out by hand from HARDWARE.md.
"""

from device.shot_reading import foul, foul_codes, foul_count, live_foul


def timeline_rig(text):
    """A timeline's levels and the real input chain with the default settings: sensors,
    assembler, the four buttons and the assembler's name for each."""
    from boardlib import shot
    from boardlib.inputs import SpotSensors
    from device.one_button import Button
    from tools.sim.board import timeline

    levels = timeline.Levels(timeline.parse(text))
    buttons = [Button(), Button(), Button(), Button()]
    which = (shot.CAROM, shot.FOUL, shot.OK, shot.UNDO)  # in timeline.BUTTONS order
    return levels, SpotSensors(), shot.ShotAssembler(), buttons, which


def poll(rig, now):
    """One 5 ms poll of a timeline_rig() at `now`: the levels read, conditioned and handed
    to the assembler; returns what the assembler's poll says."""
    levels, sensors, asm, buttons, which = rig
    standing = levels.advance(now)
    asm.spots(sensors.update(standing, now), now, sensors.flapping)
    for i in range(4):
        asm.button(which[i], buttons[i].update(levels.pressed(i), now), now)
    return asm.poll(now)


def play(text, tail_ms=3000):
    """Play a timeline; returns [time, "shot", pins, carom, foul, presses, holds] per shot
    and [time, "undo" | "menu"] per command."""
    from boardlib import shot
    from boardlib.inputs import NONE

    rig = timeline_rig(text)
    levels, asm = rig[0], rig[2]
    out = []
    now = 0
    while now <= levels.end_ms + tail_ms:
        result = poll(rig, now)
        if result == shot.SHOT:
            out.append([now, "shot", asm.pins, asm.carom, foul(asm),
                        asm.foul_presses, asm.foul_holds])
        elif result == shot.UNDO:
            out.append([now, "undo"])
        elif result == shot.MENU:
            out.append([now, "menu"])
        elif result != NONE:
            out.append([now, "unknown %d" % result])
        now += 5
    return out


def play_levels(steps):
    """Feed raw levels [[duration_ms, standing_mask, buttons_mask], ...] at a 5 ms poll.

    Returns [results, problems]: problems lists every shot that counted a spot that was
    down when the shot began, a spot that was never down during the shot, or a spot that
    was flapping during the shot.
    """
    from boardlib import shot
    from boardlib.inputs import NONE, SpotSensors
    from device.one_button import Button

    sensors = SpotSensors(flap_limit=6, flap_window_ms=300, stuck_ms=2000)
    asm = shot.ShotAssembler(settle_ms=300)
    buttons = [Button(), Button(), Button(), Button()]
    which = (shot.CAROM, shot.FOUL, shot.OK, shot.UNDO)
    results = []
    problems = []
    now = 0
    previous = -1
    blocked = 0  # down when the current shot began, worked out here from what was fed
    seen = 0  # every spot down at some poll of the current shot
    faulted = 0  # every spot faulted at some poll of the current shot
    for duration, standing, pressed in steps:
        for _ in range(duration // 5):
            down = sensors.update(standing, now)
            was_busy = asm.busy
            asm.spots(down, now, sensors.flapping)
            if asm.busy and not was_busy:
                blocked = previous & down
                seen = 0
                faulted = 0
            for i in range(4):
                was_busy = asm.busy
                asm.button(which[i], buttons[i].update(pressed >> i & 1, now), now)
                if asm.busy and not was_busy:
                    blocked = down
                    seen = 0
                    faulted = 0
            seen |= down
            faulted |= sensors.flapping
            result = asm.poll(now)
            if result == shot.SHOT:
                results.append([now, asm.pins, asm.carom, foul(asm)])
                if asm.pins & blocked or asm.pins & ~seen or asm.pins & faulted:
                    problems.append([now, asm.pins, blocked, seen, faulted])
            elif result != NONE:
                results.append([now, result])
            previous = down
            now += 5
    return [results, problems]


def poll_without_allocating(text, tail_ms=3000):
    """Play a timeline with the heap locked after set-up (unix port only).

    Returns [shots, commands, None] or [.., .., time] of the poll that allocated.
    """
    import micropython

    from boardlib import shot
    from boardlib.inputs import NONE

    rig = timeline_rig(text)
    shots = 0
    commands = 0
    now = 0
    end = rig[0].end_ms + tail_ms
    micropython.heap_lock()
    try:
        while now <= end:
            result = poll(rig, now)
            if result == shot.SHOT:
                shots += 1
            elif result != NONE:
                commands += 1
            now += 5
    except MemoryError:
        micropython.heap_unlock()
        return [shots, commands, now]
    micropython.heap_unlock()
    return [shots, commands, None]


def direct_calls():
    """Drive a ShotAssembler by hand; returns what it reported at each step."""
    from boardlib import shot
    from boardlib.inputs import HOLD, NONE, PRESS

    asm = shot.ShotAssembler(settle_ms=1000)
    out = []
    asm.spots(0, 0)
    asm.button(shot.FOUL, PRESS, 100)
    asm.button(shot.FOUL, HOLD, 200)
    asm.button(shot.FOUL, PRESS, 300)
    asm.spots(0b00100, 400)
    asm.button(shot.CAROM, PRESS, 450)
    asm.button(shot.CAROM, HOLD, 460)
    asm.button(shot.CAROM, PRESS, 470)
    out.append([asm.busy, asm._counted, asm._carom, live_foul(asm)])
    asm.button(shot.OK, HOLD, 500)
    out.append([asm.poll(500) == shot.MENU, asm.busy])
    asm.button(shot.OK, PRESS, 600)
    out.append([asm.poll(600) == shot.SHOT, asm.busy, asm.pins, asm.carom, foul(asm),
                asm.foul_presses, asm.foul_holds, foul_count(asm),
                list(foul_codes(asm, "quilles"))])
    asm.button(shot.UNDO, HOLD, 700)
    out.append(asm.poll(700) == shot.UNDO)
    asm.button(shot.CAROM, NONE, 800)
    out.append([asm.busy, asm.poll(800)])
    for which, kind in ((9, PRESS), (shot.CAROM, 7)):
        try:
            asm.button(which, kind, 900)
            out.append("no error")
        except ValueError as e:
            out.append(str(e))
    out.append([asm.busy, asm.poll(900)])
    for i in range(10):
        asm.button(shot.OK, PRESS, 1000 + i)
    shots = 0
    while asm.poll(1100) == shot.SHOT:
        shots += 1
    out.append([shots, asm.dropped])
    asm.button(shot.CAROM, PRESS, 2000)
    asm.button(shot.OK, PRESS, 2001)
    asm.button(shot.CAROM, PRESS, 2002)
    asm.reset()
    out.append([asm.busy, asm.poll(2003)])
    asm.spots(0b00110, 2100)
    asm.button(shot.FOUL, PRESS, 2200)
    out.append([asm.busy, asm._counted, live_foul(asm)])
    asm.button(shot.UNDO, PRESS, 2300)
    out.append([asm.busy, asm._counted, live_foul(asm)])
    asm.button(shot.UNDO, PRESS, 2400)
    out.append([asm.busy, asm._counted, asm.poll(2400)])
    asm.button(shot.CAROM, PRESS, 3000)
    out.append([asm.poll(3995), asm.poll(4000) == shot.SHOT, asm.pins, asm.carom])
    for settle in (0, "1500"):
        try:
            shot.ShotAssembler(settle_ms=settle)
            out.append("no error")
        except ValueError as e:
            out.append(str(e))
    return out
