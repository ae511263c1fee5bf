"""One flipped bit on the flash never loses a stored game silently (issue: bit flips).

tools/sim/board/bitflip.py plays a game onto littlefs over the simulated board's flash, then
flips one bit at a time at random in the used area of the image and resumes the game with
`journal_load.load()`, counting what came back. `make bench` runs it at full size
(`flash_bitflip_silent_losses`); this is the small version. MicroPython only: littlefs
(os.VfsLfs2) is where the damage lands.
"""

from tools.port import upy

FLIPS = 60
EVENTS = 200  # the history fills a chunk (130 events): game.his is in the used area too


def run_experiment(flips, events, seed):
    proc = upy.run_file(upy.entry("bitflip"), [str(flips), str(events), str(seed)],
                        heapsize="32M", timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    counts = {}
    for line in proc.stdout.splitlines():
        name, value = line.split()
        counts[name] = int(value)
    return counts


def test_no_flipped_bit_loses_the_game_silently(hostile_report):
    counts = run_experiment(FLIPS, EVENTS, 3)
    hostile_report("flash: one flipped bit, then resume", flips=counts["flips"],
                   whole=counts["whole"], lost_last=counts["lost_last"],
                   lost_more_err=counts["lost_more_err"], vanished_err=counts["vanished_err"],
                   silent_losses=counts["silent_losses"], raised=counts["raised"])
    assert counts["flips"] == FLIPS and counts["events"] == EVENTS
    assert sum(counts[name] for name in (
        "whole", "lost_last", "lost_more_err", "lost_silent", "vanished_err",
        "vanished_silent", "unmountable", "raised")) == FLIPS
    assert counts["raised"] == 0  # load() never raises on bad data
    assert counts["silent_losses"] == 0  # more than the last event, or all, without Err
    assert counts["whole"] >= 0.95 * FLIPS  # at least 95 % lose nothing at all
