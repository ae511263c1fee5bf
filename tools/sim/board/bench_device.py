"""Device-side measurements for `tools.bench`: the real firmware on the simulated board.

    micropython tools/sim/board/bench_device.py idle CYCLES      # CYCLES idle app steps
    micropython tools/sim/board/bench_device.py board CYCLES     # CYCLES idle 10 ms cycles
    micropython tools/sim/board/bench_device.py shots SHOTS      # SHOTS scored shots
    micropython tools/sim/board/bench_device.py alloc CYCLES SHOTS
    micropython tools/sim/board/bench_device.py game SHOTS DIR   # wear, frames; image in DIR
    micropython tools/sim/board/bench_device.py resume LOADS DIR # load the game in DIR
    micropython tools/sim/board/bench_device.py tasks TICKS [IMAGE]   # the board's own task
    micropython tools/sim/board/bench_device.py taskshots SHOTS [IMAGE]
    micropython tools/sim/board/bench_device.py clock CALLS      # what the stand-ins cost
    micropython tools/sim/board/bench_device.py heapuse SHOTS [IMAGE]  # heap after warm-up

Time is virtual, one tick every 5 ms on the schedule of the board's tasks (`firmware.run`):
inputs every 5 ms, link every 10, display every 40, upkeep and watchdog every 250. A
shot is a fixed 400 ms input pattern (spots down, up, an optional carom, `ok`), so a run
of N shots is exactly N * SHOT_STEPS ticks and the bench can take the idle ticks out.

The measured work runs in a counted window (`counted`): after the start-up, between two
calls of `gc.isenabled()`, which tools.bench has callgrind take as the window's edges.
Only the window is counted: the start-up (compiling about 190 KB of source into the heap)
is not the same work in every run (see `counted`). `idle`, `board` and `shots` with a
count of 0 run an empty window: the difference between a count and 0 is the work itself.
`tasks`, `taskshots` and `resume` count such an empty window first in the same run.

`tasks` and `taskshots` run the firmware's own loop (`firmware.run.Runner.run`), its waits
included, in board time (tools/sim/board/vclock.py: time moves only while the loop waits
in its poll, in the ESP32's 10 ms ticks): TICKS idle ticks, or SHOTS shots whose inputs
change at their times in board time, counted after the warm-up; with IMAGE the board boots from a
copy of that flash image (a game already long). `clock` counts the stand-ins themselves.
Every mode prints `key value` lines.
"""

import gc
import os
import sys
import time

import micropython


def shift_names(count):
    """Intern `count` names of the bench's own before the firmware's (PINBOARD_NAME_SHIFT):
    each of the firmware's names then has a number `count` higher. MicroPython's lookup
    cache is indexed by a name's number (py/map.c, MAP_CACHE_OFFSET), so which of the
    firmware's names share a slot with the interpreter's own (`len`, `append`) follows
    from how many names came before; on the ESP32 that is the port's own table, another
    count. tools.bench counts a shot at several shifts (docs/performance.md, "A shot at
    any numbering of the names")."""
    for i in range(count):
        getattr(gc, "shift%d" % i, None)  # (a name looked up is interned)


shift_names(int(os.getenv("PINBOARD_NAME_SHIFT") or 0))

# (the firmware and the simulator after the shift, which numbers their names)
from boardlib.link import Link  # noqa: E402
from firmware.app import App  # noqa: E402
from tools.sim.board.bench_standins import (  # noqa: E402
    FLASH_CALLS,
    CInput,
    CSink,
    LeanFlash,
    SinkStream,
    _c_speed_display,
    _c_speed_inputs,
    _quiet_emulators,
)
from tools.sim.board.board import FLASH_MOUNT, build  # noqa: E402
from tools.sim.board.shots import LONG_SETTINGS  # noqa: E402

STEP_MS = 5
# tools.bench gives every run its own scratch folder for the flash image
_SCRATCH_IMAGE = (os.getenv("PINBOARD_SCRATCH") or "/tmp") + "/bench-flash.img"
SHOT_MS = 400
SHOT_STEPS = SHOT_MS // STEP_MS
WARMUP_MS = 12000  # boot messages and the first heartbeat are over by then
SETTINGS = LONG_SETTINGS


def make_app(state_dir=None, quiet=True, image=None, c_link=False):
    # Costs are measured with C-speed pins and flash (state_dir None), and with c_link a
    # C-speed serial link; the wear figures keep the simulator's counting flash image
    # (state_dir given), the frame figures a sink that counts.
    sim = build(display="tm1637", state_dir=state_dir,
                bdev=None if state_dir else LeanFlash(_SCRATCH_IMAGE, image=image))
    sink = CSink() if c_link else SinkStream()
    sim.board.link = Link(sink, 0)
    if quiet:
        _quiet_emulators(sim)
        if state_dir is None:
            _c_speed_display(sim)
            _c_speed_inputs(sim)
    app = App(sim.board)
    app.boot(0)
    return sim, app, sink


def counted(work, *args):
    """`work(*args)` as the counted window: tools.bench has callgrind count only what runs
    between the two calls of `gc.isenabled()` (py/modgc.c: a C function without side
    effects that nothing else calls), the window's edges.

    The start-up is left out because it is not the same work in every run: where the
    allocator finds room while the sources are compiled depends on the lengths of the
    strings held before (the script's arguments, the tree's path), so the start-up of
    `idle 0` and of `board 200` could differ by more than the whole work counted
    (docs/performance.md). The work starts on a collected heap (the collection is not
    counted): a collection the allocator starts falls in the window only when the work
    itself fills the heap, not when the start-up happened to leave it nearly full."""
    gc.collect()
    gc.isenabled()
    result = work(*args)
    gc.isenabled()
    return result


def idle_steps(app, t, count):
    from firmware.run import tick

    for _ in range(count):
        tick(app, t)
        t += STEP_MS
    return t


class ShotPattern:
    """Pseudo-random but repeatable valid shots (a linear congruential generator)."""

    def __init__(self, seed=7):
        self.x = seed

    def next(self):
        """(fallen spots mask, carom) of the next shot."""
        self.x = x = (self.x * 1103515245 + 12345) & 0x7FFFFFFF
        return ((x >> 8) & 31) or 1, (x >> 16) & 1

    def play(self, sim, app, t):
        """One shot: SHOT_STEPS steps from t; returns the time after it."""
        from firmware.run import tick

        fallen, carom = self.next()
        sim.set_standing_mask(31 & ~fallen)
        for i in range(SHOT_STEPS):
            offset = i * STEP_MS
            if offset == 100:
                sim.set_standing_mask(31)  # the pins are stood up again
            if carom and offset == 150:
                sim.set_button(0, True)
            elif offset == 250:
                sim.set_button(0, False)
                sim.set_button(2, True)  # ok ends the shot at once
            elif offset == 350:
                sim.set_button(2, False)
            tick(app, t)
            t += STEP_MS
        return t


def start(state_dir=None, quiet=True):
    sim, app, sink = make_app(state_dir, quiet)
    app.new_game(SETTINGS, 0)
    t = idle_steps(app, 0, WARMUP_MS // STEP_MS)
    return sim, app, sink, t


TICK_MS = 10  # the ESP32's FreeRTOS tick (CONFIG_FREERTOS_HZ=100)


def board_cycles(app, t, count):
    """The tasks' idle work as the ESP32 runs them: a task's sleep_ms(5) or (10) waits for
    the next 10 ms tick, so inputs and link run once a tick, the display every 40 ms and
    upkeep every 250 ms."""
    for _ in range(count):
        app.poll_inputs(t)
        app.service_link(t)
        if t % 40 == 0:
            app.refresh_display(t)
        if t % 250 == 0:
            app.upkeep(t)
            app.board.wdt.feed()
        t += TICK_MS
    return t


class _QuietPWM:
    """A PWM with nothing behind it: the board's PWM is a peripheral, not work."""

    def freq(self, hz):
        pass

    def duty_u16(self, duty):
        pass


def _calling(app, now_ms):
    """A buzzer on the app that plays the game-won fanfare over and over (the longest
    call): every counted tick has a call playing."""
    from boardlib.buzzer import Buzzer
    from boardlib.calls import GAME

    class Looping(Buzzer):
        def _step(self):
            if self._at >= len(self._steps):
                self._at = 0  # the call again, at once
            Buzzer._step(self)

    app.buzzer = Looping(_QuietPWM())
    app.buzzer.play(GAME, now_ms)
    app._sounding = True


def mode_board(cycles):
    sim, app, sink, t = start()
    counted(board_cycles, app, t, cycles)
    print("cycles", cycles)


def mode_idle(cycles):
    sim, app, sink, t = start()
    counted(idle_steps, app, t, cycles)
    print("steps", cycles)


def play_shots(sim, app, pattern, t, shots):
    for _ in range(shots):
        t = pattern.play(sim, app, t)
    return t


def mode_shots(shots):
    sim, app, sink, t = start()
    pattern = ShotPattern()
    before = app.game.shots
    counted(play_shots, sim, app, pattern, t, shots)
    print("shots", app.game.shots - before)
    print("steps_per_shot", SHOT_STEPS)


def mode_alloc(cycles, shots):
    sim, app, sink, t = start()
    pattern = ShotPattern()
    t = pattern.play(sim, app, t)  # every code path once, so lazy set-up is not counted
    t = idle_steps(app, t, 400)
    # With the collector off, gc.mem_alloc() only grows: every object made and dropped
    # stays counted. micropython.mem_total() would also count the call frames the VM
    # borrows from the heap for functions with many locals and hands back on return
    # (py/objfun.c); those leave nothing to collect, so they are reported apart.
    gc.collect()
    gc.disable()
    a0 = gc.mem_alloc()
    f0 = micropython.mem_total()
    t = idle_steps(app, t, cycles)
    a1 = gc.mem_alloc()
    f1 = micropython.mem_total()
    for _ in range(shots):
        t = pattern.play(sim, app, t)
    a2 = gc.mem_alloc()
    gc.enable()
    print("idle_borrowed", (f1 - f0) - (a1 - a0))
    print("idle_cycles", cycles)
    print("idle_alloc", a1 - a0)
    print("shots", shots)
    print("shot_alloc", a2 - a1)
    print("frames_idle_and_shots", sink.frames)


def mode_game(shots, state_dir):
    sim, app, sink, t = start(state_dir)
    frames0 = sink.frames
    app._send_state(t)  # one state frame of the game as it is now
    pattern = ShotPattern()
    flash = sim.flash
    e0 = flash.erases
    w0 = flash.bytes_written
    before = app.game.shots
    for _ in range(shots):
        t = pattern.play(sim, app, t)
    print("shots", app.game.shots - before)
    print("erases", flash.erases - e0)
    print("bytes_written", flash.bytes_written - w0)
    print("frame_max", sink.largest)
    print("frames", sink.frames - frames0)
    # the application's modules this game imported (tools.bench: none counted apart)
    print("loaded", ",".join(sorted(name for name in sys.modules
                                    if name.split(".")[0] in ("rules_core", "boardlib",
                                                              "firmware"))))
    app.store.close()
    os.umount(FLASH_MOUNT)  # littlefs writes what it still holds, as at a clean power-off
    flash.close()


class Edge:
    """A pin of the table changing at its time (a vclock action). What it costs beside
    the pin's interrupt handler (the board's own, counted) is measured by the `clock`
    mode and taken out by tools.bench, as the clock's stand-ins are."""

    def __init__(self, pin, level):
        self.pin = pin
        self.level = level

    def fire(self):
        self.pin.set(self.level)


def schedule_shots(sim, pattern, start, shots):
    """The table's side of `shots` shots from board time `start`, at their times (the
    same pattern as ShotPattern.play), one action per pin that changes (the pins of
    _c_speed_inputs); returns the time after the last."""
    from tools.sim.board import vclock

    board = sim.board
    fall = 1 - board.standing_level
    t = start
    for _ in range(shots):
        fallen, carom = pattern.next()
        for i in range(5):
            if fallen & (1 << i):
                vclock.at(t, Edge(board.spots[i], fall).fire)
                vclock.at(t + 100, Edge(board.spots[i], 1 - fall).fire)
        if carom:
            vclock.at(t + 150, Edge(board.buttons[0], 0).fire)
            vclock.at(t + 250, Edge(board.buttons[0], 1).fire)
        vclock.at(t + 250, Edge(board.buttons[2], 0).fire)
        vclock.at(t + 350, Edge(board.buttons[2], 1).fire)
        t += SHOT_MS
    return t


def run_tasks(ticks, shots, image=None, heap_only=False, calling=False):
    """The board's own loop for `ticks` idle 10 ms ticks, or `shots` shots, in board time,
    counted after the warm-up; prints what the clock's stand-ins were asked meanwhile.
    With heap_only, nothing is counted: the heap in use after the warm-up is printed
    (tools.bench sizes the counted runs' heap with it)."""
    from tools.sim.board import vclock

    vclock.install()
    from firmware.run import Runner

    # the table's room for the shots' actions (schedule_shots: at most 14 a shot) and the
    # stops, before the firmware takes its heap
    vclock.reserve(14 * shots + 4)
    sim, app, sink = make_app(image=image, c_link=True)
    if image is None:
        app.new_game(SETTINGS, vclock.now())
    runner = Runner(app, vclock.ticks_ms)
    pattern = ShotPattern()
    before = app.game.shots
    warm = vclock.now() + WARMUP_MS
    # The table's side of the shots is made before the warm-up, while the heap is still in
    # one piece: made after it, the schedule's growing table found no block in the heap
    # the board leaves free (the firmware's objects lie in it by then).
    end = schedule_shots(sim, pattern, warm + TICK_MS, shots) if shots else 0
    run_until(runner, vclock, warm)
    if calling:
        _calling(app, vclock.now())
    length = ticks * TICK_MS
    if shots:
        length = end - vclock.now()
    gc.collect()
    if heap_only:
        print("used", gc.mem_alloc())
        return
    # Two windows: the loop entered and left at once (what a window costs besides the
    # work: tools.bench takes it away), then the loop for `length` ms of board time.
    for prefix in ("zero_", ""):
        if not prefix and shots:
            length = end - vclock.now()
        vclock.stop_at(vclock.now() + (length if not prefix else 0))
        calls = [tuple(vclock.calls) + tuple(FLASH_CALLS)]
        gc.isenabled()
        try:
            runner.run()
        except vclock.Stop:
            pass
        gc.isenabled()
        calls.append(tuple(vclock.calls) + tuple(FLASH_CALLS))
        for i, name in enumerate(("clock_ticks_ms", "clock_ipoll", "clock_waited",
                                  "clock_actions", "flash_read", "flash_write",
                                  "flash_ioctl")):
            print(prefix + name, calls[1][i] - calls[0][i])
    print("ticks", ticks)
    print("board_ms", length)
    print("shots", app.game.shots - before)
    print("game_shots", app.game.shots)  # from the game's first (a resumed game's too)
    print("errors", runner.errors)


def run_until(runner, vclock, ms):
    """The board's loop until board time `ms`."""
    vclock.stop_at(ms)
    try:
        runner.run()
    except vclock.Stop:
        pass


def mode_clock(count):
    """What the stand-ins cost, each in a counted window of its own (tools.bench takes
    the empty loop's window from each): `count` calls of the stand-in ticks_ms() and of
    the port's own; `count` ipoll(0) and `count` ioctl calls of an object that is never
    ready; one ipoll waiting `count` ticks for it; `count` table actions (a pin that
    changes, with no handler); `count` reads, programs and syncs of the block device."""
    import time

    from tools.sim.board import vclock

    class Never:
        def ioctl(self, request, arg):
            return 0

    never = Never()
    poller = vclock.poll()
    poller.register(never, vclock.POLLIN)
    board_ms = vclock.ticks_ms
    port_ms = time.ticks_ms

    def empty(n):
        for _ in range(n):
            pass

    def stand_in_ms(n):
        for _ in range(n):
            board_ms()

    def port_ticks(n):
        for _ in range(n):
            port_ms()

    def ipoll0(n):
        for _ in range(n):
            poller.ipoll(0)

    def ioctl(n):
        for _ in range(n):
            never.ioctl(3, 1)

    def waited(n):
        poller.ipoll(n * vclock.TICK_MS)

    # the table's actions: a pin without a handler changing, `count` times, as the
    # vclock wait runs them
    quiet_pin = CInput(1)
    start = vclock.now() + 10 * vclock.TICK_MS * count + 1000
    for k in range(count):
        vclock.at(start, Edge(quiet_pin, k & 1).fire)

    def actions(n):
        vclock._due(start)

    flash = LeanFlash(_SCRATCH_IMAGE, blocks=4)
    buf = bytearray(128)  # littlefs reads and programs through caches of this size

    def flash_read(n):
        for _ in range(n):
            flash.readblocks(1, buf, 256)

    def flash_write(n):
        for _ in range(n):
            flash.writeblocks(1, buf, 256)

    def flash_ioctl(n):
        for _ in range(n):
            flash.ioctl(3, 0)  # sync

    for work in (empty, stand_in_ms, port_ticks, ipoll0, ioctl, waited, actions,
                 flash_read, flash_write, flash_ioctl):
        counted(work, count)


def mode_resume(loads, state_dir):
    from boardlib import journal_load
    from boardlib.journal import GameNumbering, GameStore
    from firmware.boards import esp32_devkit as profile
    from rules_core import resume  # noqa: F401  (loaded before the window, as the reader)
    from tools.sim.board.board import IMAGE_NAME
    from tools.sim.board.flash import FileBlockDev, mount

    bdev = FileBlockDev(state_dir + "/" + IMAGE_NAME)
    mount(bdev, FLASH_MOUNT)

    def load_games(loads):
        best = None
        shots = -1
        for _ in range(loads):
            t0 = time.ticks_us()
            store = GameStore(FLASH_MOUNT + profile.DATA_DIR, codec=GameNumbering())
            game, status = journal_load.load(store)
            took = time.ticks_diff(time.ticks_us(), t0)
            store.close()
            shots = game.shots if game is not None else -1
            best = took if best is None else min(best, took)
        return best, shots

    counted(load_games, 0)  # the window's own cost: tools.bench takes it away
    best, shots = counted(load_games, loads)
    print("loads", loads)
    print("shots", shots)
    print("best_us", -1 if best is None else best)


def main(argv):
    if not argv:
        raise SystemExit("usage: bench_device.py idle|shots|alloc|game|resume ...")
    mode = argv[0]
    if mode == "idle":
        mode_idle(int(argv[1]))
    elif mode == "board":
        mode_board(int(argv[1]))
    elif mode == "calling":
        run_tasks(int(argv[1]), 0, calling=True)
    elif mode == "shots":
        mode_shots(int(argv[1]))
    elif mode == "alloc":
        mode_alloc(int(argv[1]), int(argv[2]))
    elif mode == "game":
        mode_game(int(argv[1]), argv[2])
    elif mode == "resume":
        mode_resume(int(argv[1]), argv[2])
    elif mode == "tasks":
        run_tasks(int(argv[1]), 0, argv[2] if len(argv) > 2 else None)
    elif mode == "taskshots":
        run_tasks(0, int(argv[1]), argv[2] if len(argv) > 2 else None)
    elif mode == "clock":
        mode_clock(int(argv[1]))
    elif mode == "heapuse":
        run_tasks(0, int(argv[1]), argv[2] if len(argv) > 2 else None, heap_only=True)
    else:
        raise SystemExit("unknown mode %s" % mode)


if __name__ == "__main__":
    main(sys.argv[1:])
