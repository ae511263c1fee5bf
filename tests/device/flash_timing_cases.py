"""The simulated flash's timing (tools/sim/board/flash.py) and the board time it takes in
the simulator's timeline mode (tools/sim/board/run.py). Run by tests/test_flash_timing.py.
"""

import os

from device.support import check, micropython_only
from tools.sim.board.flash import TIMINGS, TYPICAL, RamBlockDev, Stall, mount, program_commands

HEAPSIZE = "8M"


def case_program_commands_are_cut_as_esp_idf_cuts_them():
    # at most 64 bytes a command, never across a 256-byte page
    check(program_commands(0, 32) == 1, "one small write")
    check(program_commands(0, 128) == 2, "littlefs's 128-byte cache: two commands")
    check(program_commands(224, 64) == 2, "32 bytes to the page's end, then 32 more")
    check(program_commands(4096, 4096) == 64, "a whole sector")
    check(program_commands(0, 0) == 0, "nothing")
    check(TIMINGS["typical"] == TYPICAL and TIMINGS["none"] is None, "names")


def case_every_erase_and_program_takes_its_time_and_waits_it():
    micropython_only("littlefs over the block device (os.VfsLfs2)")
    waited = []
    dev = RamBlockDev(4096, 16, timing=TYPICAL, wait=waited.append)
    mount(dev, "/t")
    with open("/t/x", "wb") as f:
        f.write(bytes(9000))  # three blocks of data
    os.umount("/t")
    check(dev.erases >= 3 and dev.writes > 0, "erased and programmed")
    check(sum(waited) == dev.busy_us, "every microsecond was waited, once")
    check(waited.count(TYPICAL[0]) == dev.erases, "45 ms each erase")
    programs = dev.busy_us - dev.erases * TYPICAL[0]
    check(programs >= dev.writes * TYPICAL[1], "each program at least one page's time")
    instant = RamBlockDev(4096, 16)
    mount(instant, "/u")
    os.umount("/u")
    check(instant.busy_us == 0 and instant.erases > 0, "without timing: no time")


def case_a_stall_hands_out_whole_steps_and_keeps_the_rest():
    dev = RamBlockDev(4096, 4)
    stall = Stall(dev, 5)
    dev.busy_us += 47000  # as an erase and a few programs would
    check(stall.take_ms() == 45, "whole steps")
    check(stall.take_ms() == 0, "nothing new")
    dev.busy_us += 3000
    check(stall.take_ms() == 5, "the 2 ms left over and 3 ms more make a step")


def timeline_steps(shots, timing):
    """The simulator's timeline mode plays `shots` shots: each step's board time, flash
    time (us) and erases, and what the game and the flash did."""
    micropython_only("the firmware on the simulated board")
    from tools.sim.board import flashgap_device

    got = flashgap_device.measure(shots, timing)
    return {"polls": got["polls"], "compactions": got["compactions"], "shots": got["shots"],
            "gap_ms": got["gap_ms"]}


def long_game(where, shots):
    """A flash with typical timing mounted at `where`, and a store there holding a new
    game of `shots` shots: (flash, store, game)."""
    micropython_only("littlefs over the block device (os.VfsLfs2)")
    from boardlib import journal_load
    from rules_core import Game, events

    dev = RamBlockDev(4096, 384, timing=TYPICAL)
    mount(dev, where)
    store = journal_load.store(where + "/game")
    game = Game("ddbu", distance=(9999, 9999))
    for k in range(shots):
        game.apply(events.encode_shot(k % 31 + 1, k & 1, ()))
    store.new_game(game)
    return dev, store, game


def case_a_long_games_compaction_erases_at_most_a_sector_a_piece():
    # A 1000-shot game's history (7 whole chunks of 624 bytes in game.his, written whole
    # by a store that did not load them: as after a resume of a game stored before
    # game.his) and then its snapshots, written a piece at a time: no piece erases more
    # than one sector or takes the flash longer than 75 ms less the step's 5 ms (W25Q32JV
    # typical), and the game read back after it is the game.
    from boardlib import journal_load
    from boardlib.journal import GameStore
    from rules_core import events

    dev, store, game = long_game("/p", 1000)
    store.close()
    store = journal_load.store("/p/game")
    # (its first record() compacts at once, a piece after the other: between() comes
    # after each, as the board feeds its watchdog there)
    last = [dev.erases, dev.busy_us]
    first = []  # (erases, flash time) of each piece of that compaction

    def between():
        first.append((dev.erases - last[0], dev.busy_us - last[1]))
        last[:] = [dev.erases, dev.busy_us]

    store.between = between
    rec = events.encode_shot(1, 0, ())
    game.apply(rec)
    store.record(game, rec)
    store.between = None
    check(len(first) >= 2 * 11 - 1, "the history a chunk a piece: %d pieces" % len(first))
    worst_erases = max(e for e, _ in first[1:])  # (the first piece: the journal's close)
    worst_us = max(t for _, t in first[1:])
    runs = []  # the pieces of each compaction
    for k in range(40):  # events until a few compactions have gone by, piece by piece
        rec = events.encode_shot(k % 5 + 1, 0, ())
        game.apply(rec)
        store.record(game, rec)
        pieces = 0
        while True:
            erases, busy = dev.erases, dev.busy_us
            going = store.maintain_piece()
            pieces += 1
            worst_erases = max(worst_erases, dev.erases - erases)
            worst_us = max(worst_us, dev.busy_us - busy)
            if not going:
                break
        if pieces > 1:
            runs.append(pieces - 1)  # (all but the last call say that more is to come)
    check(len(runs) >= 3, "compactions happened: %r" % runs)
    # per copy: the snapshot (under 1 KB), its close, the journal
    check(min(runs) >= 2 * 3 - 1, "pieces %r" % runs)
    check(worst_erases == 1, "a piece erased %d sectors" % worst_erases)
    check(worst_us <= 70000, "a piece took the flash %d us" % worst_us)
    store.close()
    back, status = journal_load.load(GameStore("/p/game"))
    check(status == GameStore.OK and back.history.tobytes() == game.history.tobytes(),
          "the game came back")
    os.umount("/p")


def case_an_event_during_a_compaction_finishes_it_first():
    # Events that come while a compaction is under way (a shot, an undo) are on flash
    # when record() returns, and the game reads back whole after each.
    from boardlib import journal_load
    from boardlib.journal import UNDO_RECORD, GameStore
    from rules_core import events

    dev, store, game = long_game("/q", 600)
    fed = []
    store.between = lambda: fed.append(store.compacting)  # the board feeds its watchdog
    finished = 0
    for k in range(60):
        if k % 4 == 3:
            game.undo()
            rec = UNDO_RECORD
        else:
            rec = events.encode_shot(k % 7 + 1, 1, ())
            game.apply(rec)
        during = store.compacting
        store.record(game, rec)
        finished += during
        check(not store.compacting, "record() left a compaction under way")
        for _ in range(k % 6):  # a few pieces, then the next event comes
            store.maintain_piece()
        # the flash as it stands (a power cut now): read on a copy of it
        mount(RamBlockDev(4096, 384, image=bytes(dev.data)), "/r")
        reader = GameStore("/r/game")
        back, status = journal_load.load(reader)
        reader.close()
        os.umount("/r")
        check(status == GameStore.OK and back.history.tobytes() == game.history.tobytes(),
              "event %d: the game read back is not the game" % k)
    check(finished >= 3, "events came during a compaction only %d times" % finished)
    # between the pieces a record() finished at once: the compaction still under way
    check(len(fed) >= finished and all(fed), "between() called %d times" % len(fed))
    store.close()
    os.umount("/q")


def case_a_game_changed_twice_under_a_compaction_is_compacted_again():
    # The snapshot a compaction writes is views of the game's chunks, which one change
    # leaves as they were (an undo writes nothing, an event writes after them). A caller
    # that changes the game twice before record() (an undo, then an event over the undone
    # record) changes bytes the compaction has yet to write: the CRC of what it wrote is
    # not its header's, that snapshot is left as damage, and the game as it is then is
    # compacted under the next generation; the flash then reads back as recorded.
    from boardlib import journal_load
    from boardlib.journal import GameStore
    from rules_core import events

    dev, store, game = long_game("/s", 600)
    k = 0
    while True:  # events until the journal is full
        rec = events.encode_shot(k % 7 + 1, 0, ())
        game.apply(rec)
        store.record(game, rec)
        k += 1
        if store.maintain_piece():  # copy b's frame; then True if the journal is full
            break
    generation = store.generation
    check(store.maintain_piece(), "a compaction under way")  # its first 1 KB written
    before = game.history.tobytes()
    game.undo()
    other = events.encode_shot(0b11111, 1, ())
    game.apply(other)  # over the undone record, which the snapshot has yet to write
    check(game.history.tobytes() != before, "the last record changed")
    store.record_undo(game)  # the undo, recorded late
    check(store.generation == generation + 2, "not compacted again: %d after %d"
          % (store.generation, generation))
    store.record(game, other)
    store.close()
    back, status = journal_load.load(GameStore("/s/game"))
    check(status == GameStore.OK and back.history.tobytes() == game.history.tobytes(),
          "the game came back")
    os.umount("/s")


def case_no_step_erases_two_sectors():
    # The board's steps: an event (record()) in one, then maintain_piece() once a step
    # (its upkeep is never due in the event's own step: firmware.app), every step while
    # it asks for more. The copies' directories get the same commits and fill alike:
    # committed in one step, both would be compacted by littlefs in the same one (two
    # sectors, about 98 ms). No step erases more than one.
    from boardlib.journal import UNDO_RECORD
    from rules_core import events

    dev, store, game = long_game("/w", 0)
    worst = []
    for k in range(400):
        erases = dev.erases
        if k % 9 == 8:
            game.undo()
            store.record(game, UNDO_RECORD)
        else:
            rec = events.encode_shot(k % 7 + 1, k & 1, ())
            game.apply(rec)
            store.record(game, rec)
        worst.append(dev.erases - erases)  # the event's step
        step = 0
        going = True
        while going or step <= k % 4:  # (a compaction goes on a piece a step, to its end)
            erases = dev.erases
            going = store.maintain_piece()
            worst.append(dev.erases - erases)
            step += 1
    check(sum(worst) >= 20, "the flash erased only %d sectors" % sum(worst))
    check(max(worst) == 1, "a step erased %d sectors" % max(worst))
    store.close()
    os.umount("/w")


class _HostLines:
    """The twin's control pipe as the chip reads it: `P gpio level ms` lines, readable
    while some are left (polled through ioctl, as a stream object is)."""

    def __init__(self, lines):
        self.lines = [line.encode() for line in lines]

    def readline(self):
        return self.lines.pop(0)

    def ioctl(self, request, arg):
        if request == 3:  # MP_STREAM_POLL: readable while a line is left
            return arg & 1 if self.lines else 0
        return -1 if request == 10 else 0  # no file descriptor


def _twin_hardware(lines, now_us):
    import io

    from firmware.boards import esp32_devkit as profile
    from tools.sim.board.esp32.hardware import Hardware

    class Pipe(io.IOBase, _HostLines):
        pass

    hardware = Hardware(ctl_in=Pipe(lines), clock_us=lambda: now_us[0])
    return hardware, hardware.pin(profile.SPOTS[0])


def case_twin_switch_changes_that_arrive_together_keep_their_time_apart():
    """A spot knocked over and stood up 300 ms later, both reaching a chip that ran late:
    the pin is down for 300 ms of the chip's clock, as on a board (esp32/hardware.py)."""
    micropython_only("the twin's chip side")
    from firmware.boards import esp32_devkit as profile

    gpio = profile.SPOTS[0]
    now = [5_000_000]
    # (a spot's switch is open, 1, while the pin stands: the profile's wiring)
    hardware, pin = _twin_hardware(["P %d 0 1000\n" % gpio, "P %d 1 1300\n" % gpio], now)
    check(pin.value() == 0, "knocked over at once: the first change waits for nothing")
    now[0] += 299_000
    check(pin.value() == 0, "still down 299 ms later on the chip's clock")
    now[0] += 1_000
    check(pin.value() == 1, "stood up 300 ms after it fell")


def case_twin_switch_changes_during_a_flash_stall_are_read_after_it():
    """The same two changes made while the flash stalls the chip: the firmware reads no
    pin meanwhile, so it never sees the spot down, as a board would not."""
    micropython_only("the twin's chip side")
    from firmware.boards import esp32_devkit as profile

    gpio = profile.SPOTS[0]
    now = [5_000_000]
    hardware, pin = _twin_hardware(["P %d 0 1000\n" % gpio, "P %d 1 1300\n" % gpio], now)

    def stall(us):
        now[0] += us

    hardware.flash_wait(400_000, stall)
    check(pin.value() == 1, "read after the stall: standing, as the host left it")
