"""What the tests read of a `boardlib.shot.ShotAssembler` beyond what the board reads.

    foul(asm), foul_count(asm)        # after SHOT: 2 any hold, 1 presses only, 0; how many
    foul_codes(asm, "quilles")        # ("quilles", "foul"): holds first, then presses
    shot_for(asm, "ceb")              # (pins, carom, fouls) as the rules id reads them
    live_foul(asm)                    # the shot in progress's foul mark (0, 1, 2)
    timer(asm, now_ms)                # what `left` says after a poll; None for -1

The board writes a shot's record itself (`record_into`) and reads `left`: these served the
tests and the simulator alone, so the assembler a board holds leaves them out. Runs on
CPython and on the MicroPython unix port.
"""

from boardlib.shot import CASINO_RULES, SECOND_FOUL

try:
    from time import ticks_diff
except ImportError:  # CPython
    from boardlib.ticks import ticks_diff


def foul(asm):
    """The last shot's foul mark: 2 if any hold, else 1 if any press, else 0."""
    return 2 if asm.foul_holds else (1 if asm.foul_presses else 0)


def foul_count(asm):
    """The last shot's fouls, presses and holds together."""
    return asm.foul_presses + asm.foul_holds


def foul_codes(asm, second_code, ordinary="foul"):
    """The last shot's fouls as rule codes, e.g. ("quilles", "foul")."""
    return (second_code,) * asm.foul_holds + (ordinary,) * asm.foul_presses


def shot_for(asm, rules):
    """(pins, carom, fouls) of the last shot as the rules id reads the buttons."""
    carom = asm.carom
    if carom == 2 and rules not in CASINO_RULES:
        carom = 1
    return asm.pins, carom, foul_codes(asm, SECOND_FOUL[rules])


def live_foul(asm):
    """The foul mark of the shot in progress (0 between shots)."""
    return 2 if asm._holds else (1 if asm._presses else 0)


def timer(asm, now_ms):
    """The ms from now_ms until poll() would act with the spots and buttons as they are:
    0 while results wait, the rest of the settle time while a shot with no counted spot
    down is in progress, else None."""
    if asm.waiting:
        return 0
    if asm.busy and not (asm._down & ~asm._blocked):
        return asm.settle_ms - ticks_diff(now_ms, asm._quiet_since)
    return None
