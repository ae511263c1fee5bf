"""The application on the simulated board (tests/test_app.py): boot notices, bad data on
flash, a stuck sensor, pins left lying past the stuck time, the setup menu and the
watchdog.

MicroPython only: the simulated board keeps its flash on littlefs (os.VfsLfs2), as the
board does. Each scenario runs the real firmware (`firmware.app.App` on `tools.sim.board`)
in a state folder of its own and reads the display through the emulated chips.
"""

from device.support import play
from firmware.app import App
from firmware.run import tick
from tools.sim.board.board import FLASH_MOUNT, build

CAROM, FOUL, OK, UNDO = 0, 1, 2, 3


def seen(sim, app, t0, t1, every=100):
    """Every distinct picture on the display between t0 and t1, in order."""
    shots, t, last = [], t0, None
    while t <= t1:
        tick(app, t)
        if t % every == 0:
            v = sim.visible()
            if v != last:
                shots.append(v)
                last = v
        t += 5
    return shots


class _Wire:
    """A link's stream that keeps nothing: the frames are read where they are sent."""

    def any(self):
        return 0

    def readinto(self, buf):
        return 0

    def write(self, buf):
        return len(buf)


def _recording_link():
    from boardlib.link import Link

    class RecordingLink(Link):
        def __init__(self):
            super().__init__(_Wire(), 0)
            self.errors = []  # (code, detail) of every ERROR frame sent

        def send_error(self, code, detail="", ref=0xFFFF):
            self.errors.append((code, detail))
            return super().send_error(code, detail, ref)

    return RecordingLink()


def reboot(state, cause="PWR", link=False, watchdog_ms=None):
    """The board booted on `state`; `link`: True, a link that records the errors it
    sends; "serial", the board's serial link over a wire that keeps nothing."""
    import os

    try:
        os.umount(FLASH_MOUNT)
    except OSError:
        pass
    sim = build(state_dir=state)
    sim.board.reset_cause = cause
    if watchdog_ms is not None:
        sim.board.config["watchdog_ms"] = watchdog_ms
    if link == "serial":
        from boardlib.link import Link

        sim.board.link = Link(_Wire(), 0)
    elif link:
        sim.board.link = _recording_link()
    app = App(sim.board)
    app.boot(0)
    return sim, app


def boot_after_watchdog(state):
    sim, app = reboot(state, cause="WDT")
    return seen(sim, app, 0, 5000)


def corrupt_config(state):
    sim, app = reboot(state)
    with open(FLASH_MOUNT + "/board.cfg", "w") as f:
        f.write("PBC1 0000dead\n{garbage")
    sim, app = reboot(state)
    pictures = seen(sim, app, 0, 6000)
    return {"pictures": pictures, "settle": app.board.config["settle_ms"],
            "rules": app.game.state()["rules"]}


def cut_off_journal(state, copies):
    sim, app = reboot(state)
    t = play(app, 0, 1000)  # the sensors see every pin standing first
    for pins in (0b00001, 0b00011, 0b00100):  # three scoring shots by player 1
        for spot in range(5):
            if pins & (1 << spot):
                sim.set_spot(spot + 1, False)
        t = play(app, t, t + 200)
        sim.set_standing_mask(0x1F)
        t = play(app, t, t + 3000)
    scores = app.game.state()["score"]
    for copy in copies:  # the last record damaged in these copies of the journal
        path = FLASH_MOUNT + "/game/" + copy + "/game.jrn"
        with open(path, "rb") as f:
            data = f.read()
        with open(path, "wb") as f:
            f.write(data[:-3])
    sim, app = reboot(state, link=True)
    pictures = seen(sim, app, 0, 7000)
    return {"before": scores, "after": app.game.state()["score"], "pictures": pictures,
            "errors": app.link.errors}


def dark_sensor(state):
    sim, app = reboot(state)
    sim.set_spot(2, False)  # spot 2 goes dark and stays dark
    t = play(app, 0, 185000)  # past the 3-minute stuck time
    pictures = seen(sim, app, t, t + 5000)
    t += 5005
    score_while_stuck = list(app.game.state()["score"])
    sim.set_spot(1, False)  # a real shot meanwhile: pin 1
    t = play(app, t, t + 200)
    sim.set_spot(1, True)
    t = play(app, t, t + 3000)
    return {"pictures": pictures, "stuck": score_while_stuck,
            "after": app.game.state()["score"], "shots": app.game.state()["shots"]}


def pins_left_lying(state, end):
    """Pins 2 and 3 fall and lie for minutes; then they are stood up, or `ok` is pressed
    (`end`: "stood up" or "ok"), at 200 s; then pin 1 alone."""
    sim, app = reboot(state)
    t = play(app, 0, 1000)  # all pins standing
    sim.set_spot(2, False)
    sim.set_spot(3, False)
    t = play(app, t, 182000)  # past the 3-minute stuck time
    pictures = seen(sim, app, t, t + 5000)
    t += 5005
    score_while_stuck = list(app.game.state()["score"])
    t = play(app, t, 200000)
    if end == "ok":
        sim.set_button(OK, True)
        t = play(app, t, t + 100)
        sim.set_button(OK, False)
        t = play(app, t, t + 500)
        scored = list(app.game.state()["score"])
        sim.set_spot(2, True)  # stood up afterwards: nothing more
        sim.set_spot(3, True)
    else:
        sim.set_spot(2, True)
        sim.set_spot(3, True)
        t = play(app, t, t + 3000)
        scored = list(app.game.state()["score"])
    after = seen(sim, app, t, t + 5000)
    t += 5005
    sim.set_spot(1, False)  # the next shot: pin 1 alone
    t = play(app, t, t + 200)
    sim.set_spot(1, True)
    t = play(app, t, t + 3000)
    return {"pictures": pictures, "stuck": score_while_stuck, "scored": scored,
            "after": after, "score": app.game.state()["score"], "shots": app.game.state()["shots"]}


def full_flash(state, distance, played_before):
    """Shots scored while another file has filled the flash, then room again: a ddbu game
    to `distance`, `played_before` shots of pins 1 and 2 before the flash fills."""
    import os

    sim, app = reboot(state, link=True)
    t = play(app, 0, 1000)

    def shot(t, pins):
        for spot in range(5):
            if pins & (1 << spot):
                sim.set_spot(spot + 1, False)
        t = play(app, t, t + 200)
        sim.set_standing_mask(0x1F)
        return play(app, t, t + 3000)

    app.new_game({"rules": "ddbu", "distance": (distance, distance), "sets": 1, "first": 1}, t)
    for _ in range(played_before):  # a game long enough that its snapshot needs blocks
        t = shot(t, 0b00011)
    fillers = []
    full_errno = 0
    for size in (4096, 512, 64):  # big pieces, then ever smaller ones into the gaps
        while True:
            name = FLASH_MOUNT + "/fill%d" % len(fillers)
            try:
                with open(name, "wb") as f:
                    fillers.append(name)
                    f.write(bytes(size))
                    while size == 4096:
                        f.write(bytes(size))
                        f.flush()
            except OSError as exc:
                full_errno = exc.args[0]
                break
    scores = []
    for pins in (0b00001, 0b00110, 0b00100, 0b11000) * 4:  # 16 shots on a full flash
        t = shot(t, pins)
        scores.append(list(app.game.state()["score"]))
    pictures = seen(sim, app, t, t + 4000)
    t += 4005
    error_while_full = app.storage_error
    for name in fillers:  # room again
        try:
            os.remove(name)
        except OSError:
            pass
    t = play(app, t, t + 6000)  # the next retry stores the game
    error_after = app.storage_error
    t = shot(t, 0b00001)
    after = seen(sim, app, t, t + 4000)
    played = app.game.state_json()
    link_errors = app.link.errors
    sim, app = reboot(state)
    return {"full_errno": full_errno, "scores": scores, "pictures": pictures,
            "error_while_full": error_while_full, "error_after": error_after,
            "after": after, "errors": link_errors,
            "same_after_reboot": app.game.state_json() == played}


def setup_menu(state):
    sim, app = reboot(state)
    t = play(app, 0, 5000)

    def press(t, b, ms=100):
        sim.set_button(b, True)
        t = play(app, t, t + ms)
        sim.set_button(b, False)
        return play(app, t, t + 200)

    pictures = []
    t = press(t, OK, 1000)  # hold ok: the menu, on the distance of player 1
    pictures.append(sim.visible())
    t = press(t, CAROM)  # 50
    pictures.append(sim.visible())
    t = press(t, OK)  # distance 2
    t = press(t, OK)  # who starts
    t = press(t, OK)  # the rules
    pictures.append(sim.visible())
    t = press(t, CAROM)  # rules: ceb
    pictures.append(sim.visible())
    t = press(t, OK)  # sets
    t = press(t, CAROM)  # best of 3
    pictures.append(sim.visible())
    t = press(t, OK)  # singles or teams
    t = press(t, CAROM)  # two-man teams
    pictures.append(sim.visible())
    t = press(t, OK)  # the wiring check ("tESt  no")
    t = press(t, OK)  # new game?
    pictures.append(sim.visible())
    t = press(t, CAROM)  # yes
    pictures.append(sim.visible())
    t = press(t, OK)
    pictures += seen(sim, app, t, t + 8000)
    st = app.game.state()
    return {"pictures": pictures, "rules": st["rules"], "distance": st["distance"],
            "best_of": st["best_of"], "members": st["members"],
            "menu": app.menu is not None}


class CountingWatchdog:
    feeds = 0

    def feed(self):
        self.feeds += 1


def watchdog(state, broken):
    """Run the firmware's loop for 1.2 s with the shortest watchdog (2 s: fed at least
    every second); with `broken`, the display refresh raises."""
    import time

    from firmware.run import Runner

    sim, app = reboot(state, watchdog_ms=2000)
    sim.board.wdt = CountingWatchdog()
    if broken:
        def stuck(now_ms):
            raise RuntimeError("display bus hung")

        app.refresh_display = stuck
    runner = Runner(app)
    end = time.ticks_add(time.ticks_ms(), 1200)
    while time.ticks_diff(end, time.ticks_ms()) > 0:
        runner.once(max(0, time.ticks_diff(end, time.ticks_ms())))
    return {"feeds": sim.board.wdt.feeds, "errors": runner.errors}


def shot_allocates_nothing(state):
    """A whole scored shot (the inputs, the rules, the journal's two appends, the SHOT and
    STATE frames, the display) with the heap locked: anything it allocated would raise
    MemoryError. The simulator's chip emulators are detached (the board has real chips)
    and the journal starts fresh (a compaction, which allocates, happens between shots)."""
    import micropython

    sim, app = reboot(state)
    for chip in sim.chips:  # the emulators' decoding is the simulator's, not the board's
        for name in ("clk", "dio"):
            getattr(chip, name)._listeners = []

    def run(t, ms):  # support.play, without the import inside it
        end = t + ms
        while t <= end:
            tick(app, t)
            t += 5
        return t

    def shot(t, fallen):
        sim.set_spot(fallen, False)
        t = run(t, 100)
        sim.set_spot(fallen, True)
        t = run(t, 150)
        sim.set_button(OK, True)
        t = run(t, 100)
        sim.set_button(OK, False)
        return run(t, 100)

    t = play(app, 0, 1000)
    for spot in (1, 2, 3):  # everything once: what is made at first use is made
        t = shot(t, spot)
    t = play(app, t, t + 3000)  # the messages are over, upkeep ran
    app.store.compact(app.game)  # room in the journal for the next events
    before = app.game.shots
    micropython.heap_lock()
    try:
        t = shot(t, 4)
        t = run(t, 2500)  # and the message it showed ends
    finally:
        micropython.heap_unlock()
    from boardlib import layout

    expected = bytearray(8)  # the scores, as the display facade last wrote them
    layout.scores(expected, app.game.score[0], app.game.score[1], app.game.turn)
    return app.game.shots - before, list(app.game.score), app.display._shown == expected


def _count_calls(obj, name):
    """Have obj.name counted (a list of one count); the calls go on to the method."""
    method = getattr(obj, name)
    count = [0]

    def counting(*args):
        count[0] += 1
        return method(*args)

    setattr(obj, name, counting)
    return count


def _count_class_calls(cls, name):
    """Have cls.name counted for every instance: the App calls the methods of its step
    through its class (firmware/app.py says why), so an instance's own attribute would
    not be seen. Returns the count (a list of one) and what puts the method back."""
    method = getattr(cls, name)
    return _count_calls(cls, name), lambda: setattr(cls, name, method)


def pins_read_at_changes(state):
    """A pin falls and is stood up again, then `ok`: how often the spots' and the buttons'
    pins are read (the glitch filter's, the debounce's and the settle time's ends come
    with no pin changing in between), and the shot it scores."""
    sim, app = reboot(state)
    t = play(app, 0, 3000)  # the boot's messages are over
    spots = _count_calls(app, "_read_spots")
    buttons = _count_calls(app, "_read_buttons")
    shots = app.game.shots
    sim.set_spot(2, False)
    t = play(app, t, t + 100)  # counted down 40 ms after the fall
    sim.set_spot(2, True)
    t = play(app, t, t + 300)  # standing again 40 ms after it stands
    sim.set_button(OK, True)
    t = play(app, t, t + 100)
    sim.set_button(OK, False)
    t = play(app, t, t + 2000)  # the release's debounce, then nothing for 2 s
    return {"spots_read": spots[0], "buttons_read": buttons[0],
            "shots": app.game.shots - shots, "score": list(app.game.score)}


def quiet_polls(state):
    """A pin falls and is stood up again, then `ok`: how often the shot's assembler is told
    of the spots, and how often the display's modules are written, while the game's
    scores change once."""
    sim, app = reboot(state)
    t = play(app, 0, 3000)  # the boot's messages are over
    told = _count_calls(app.assembler, "spots")
    shots = app.game.shots
    sim.set_spot(2, False)
    t = play(app, t, t + 100)  # counted down 40 ms after the fall
    sim.set_spot(2, True)
    t = play(app, t, t + 300)  # standing again 40 ms after it stands
    spots_told = told[0]
    sim.set_button(OK, True)
    t = play(app, t, t + 100)
    sim.set_button(OK, False)
    t = play(app, t, t + 200)
    return {"spots_told": spots_told, "shots": app.game.shots - shots,
            "score": list(app.game.score)}


def pins_chatter_between_steps(state):
    """A spot's line chatters 1000 times between two steps (a loose wire): its interrupt
    handler, run 1000 times with the heap locked, takes no memory and leaves one entry
    ("changed"); the next step reads the spots once and empties it."""
    import micropython

    sim, app = reboot(state)
    t = play(app, 0, 3000)  # the boot's messages are over
    reads = _count_calls(app, "_read_spots")
    pin = sim.board.spots[1]
    handler = pin._handler  # what the firmware gave machine.Pin.irq
    micropython.heap_lock()
    try:
        for _ in range(1000):
            handler(pin)
        allocated = False
    except MemoryError:
        allocated = True
    finally:
        micropython.heap_unlock()
    held = len(app.spots_changed)
    t = play(app, t, t + 5)  # one step
    return {"allocated": allocated, "held": held, "reads": reads[0],
            "left": len(app.spots_changed), "buttons": len(app.buttons_changed)}


def steps_while_pins_change(state):
    """A pin falls and stands every 100 ms for 3 s, the board stepped every 5 ms, with a
    2 s watchdog: how many steps ran the parts besides the inputs (the link, the display,
    upkeep, the watchdog), how many polled the inputs, and how often the watchdog was
    fed meanwhile."""
    sim, app = reboot(state, watchdog_ms=2000)
    t = play(app, 0, 3000)  # the boot's messages are over
    sim.board.wdt = CountingWatchdog()
    rest, put_back_rest = _count_class_calls(type(app), "_step_rest")
    polls, put_back_polls = _count_class_calls(type(app), "poll_inputs")
    try:
        for k in range(30):
            sim.set_spot(1, k % 2 == 1)
            t = play(app, t, t + 95)
    finally:
        put_back_rest()
        put_back_polls()
    return {"rest": rest[0], "polls": polls[0], "feeds": sim.board.wdt.feeds,
            "steps": 30 * 20}


def attribute_tables(state):
    """How many attributes each object a scored shot goes through holds, after three shots
    and the upkeep that follows them (what is made at first use is made): MicroPython
    keeps an object's attributes in a table it grows only when it is full
    (tests/test_app.py). The link is the board's serial one."""
    sim, app = reboot(state, link="serial")
    t = play(app, 0, 1000)
    for spot in (1, 2, 3):
        sim.set_spot(spot, False)
        t = play(app, t, t + 100)
        sim.set_spot(spot, True)
        t = play(app, t, t + 150)
        sim.set_button(OK, True)
        t = play(app, t, t + 100)
        sim.set_button(OK, False)
        t = play(app, t, t + 100)
    play(app, t, t + 3000)
    objects = {"App": app, "Link": app.link, "ShotAssembler": app.assembler,
               "SpotSensors": app.sensors, "Buttons": app.buttons, "Game": app.game,
               "Screens": app.screens, "GameStore": app.store, "Display": app.display,
               "TM1637": app.display._left}
    return {name: [type(obj).__name__, len(obj.__dict__)] for name, obj in objects.items()}
