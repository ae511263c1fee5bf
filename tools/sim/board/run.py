"""The simulated table's device side: the real firmware on the MicroPython unix port.

    micropython tools/sim/board/run.py --timeline game.timeline [--state DIR] [--link PTY]
    micropython tools/sim/board/run.py --interactive [--state DIR] [--link PTY]

`tools.sim` (CPython) starts this and talks to it; see its docstring for the options. In
timeline mode time is virtual: the poll loop runs as fast as it can, stepping the board on
a 5 ms grid when it asks to be woken (the soonest of its parts' deadlines) or the timeline
changes an input, as the board's poll sleeps until one of those, and in strides over idle
stretches (tools/sim/board/idle.py); `--speed X` and `--display-log` step it every 5 ms,
and `--speed X` keeps pace with X times real time. While the network link waits on the broker
(connecting, the TLS handshake, logging in), board time keeps real time, as the broker
does; and so it does for `TALK_MS` after the link came up and after each command from the
host, because the host's questions (a state, the events it misses) come in real time: a
board that lived through its last ten minutes in one second would be gone before the
logger could ask. The flash takes the time a real chip takes to erase and program
(`--flash-timing typical|max|none`, tools/sim/board/flash.py; typical by default): nothing
runs meanwhile, so the board's clock moves on by that much before its next poll (in
interactive mode, in real time). The timeline is read as it is played, and the final board
state is printed as one JSON line. Interactive mode runs the firmware's own
loop in real time; it reads key lines on stdin and writes `F <hex segments> <view>` when
the picture changes and `S <state json>` when the board state does
(tools/sim/board/interactive.py). `--display-log` writes every new picture of a timeline
run, with the setup menu item or the wiring check in words after it.
"""

import sys
import time

# boardlib.journal_load and rules_core.resume are imported by the boot's load(): here,
# before a --heap-budget is set, as every module is (a frozen board's code is in flash, not
# in its heap). They are held here for good: the board drops them after the load, and
# their code, outside the budget, would come free in pieces wherever the simulator's own
# start had put it, room beyond the budget of a size and shape the budget's figure must
# not depend on (a frozen board gets no heap back from them; a board deployed as .mpy
# gets back what the code figure, which does not count them, leaves out).
from boardlib import journal_load as _READER  # noqa: F401
from firmware.app import App
from firmware.run import STEP_MS, tick
from rules_core import resume as _RESUME  # noqa: F401
from tools.replay.lines import ReadError
from tools.sim.board.board import build
from tools.sim.board.flash import TIMINGS, Stall
from tools.sim.board.heap import largest_free, pin
from tools.sim.board.idle import IdleSkip

TAIL_MS = 10000
_SECOND_MS = 1000  # where IdleSkip looks (tools/sim/board/idle.py)
TALK_MS = 3000  # board time kept real after the link came up or the host last spoke
PRESS_MS = 120


def fail(message):
    sys.stderr.write("sim: %s\n" % message)
    sys.exit(2)


def parse_args(argv):
    opts = {
        "timeline": None, "interactive": False, "state": None, "link": None, "speed": 0.0,
        "new_game": False, "display": None, "rules": None, "distance": None, "sets": None,
        "first": None, "heap_budget": None, "show_display": False, "check": False,
        "config": None, "wifi": None, "display_log": False, "teams": False, "board_id": None,
        "ca": None, "buzzer": None, "frozen": None, "flash_timing": "typical", "seed": None,
    }
    flags = {
        "--interactive": "interactive", "--new-game": "new_game", "--show-display": "show_display",
        "--check": "check", "--display-log": "display_log",
        "--teams": "teams",
    }
    values = {
        "--timeline": "timeline", "--state": "state", "--link": "link", "--speed": "speed",
        "--display": "display", "--rules": "rules", "--distance": "distance", "--sets": "sets",
        "--first": "first", "--heap-budget": "heap_budget", "--config": "config",
        "--wifi": "wifi", "--board-id": "board_id", "--ca": "ca", "--frozen": "frozen",
        "--flash-timing": "flash_timing", "--buzzer": "buzzer", "--seed": "seed",
    }
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg in flags:
            opts[flags[arg]] = True
        elif arg in values:
            if i + 1 >= len(argv):
                fail("%s needs a value" % arg)
            i += 1
            opts[values[arg]] = argv[i]
        else:
            fail("unknown option %s" % arg)
        i += 1
    if opts["flash_timing"] not in TIMINGS:
        fail("--flash-timing takes %s" % ", ".join(sorted(TIMINGS)))
    try:
        opts["speed"] = float(opts["speed"])
    except ValueError:
        fail("--speed takes a number")
    if opts["seed"] is not None:
        try:
            opts["seed"] = int(opts["seed"])
        except ValueError:
            fail("--seed takes a whole number")
    if opts["heap_budget"] is not None:
        text = opts["heap_budget"].upper()
        scale = 1024 if text.endswith("K") else 1
        try:
            opts["heap_budget"] = int(text.rstrip("K")) * scale
        except ValueError:
            fail("--heap-budget takes bytes, e.g. 65536 or 64K")
    return opts


def build_board(opts, config=None, wlan=None, flash_wait=None, clock=None):
    """The simulated board, or exit 2 when the --state folder's flash image is unreadable.

    An image that does not exist yet is made erased (all 0xFF), and an erased image is
    formatted, as an ESP32 formats a blank flash at its first boot (ports/esp32/modules/
    inisetup.py). Anything else littlefs cannot mount (zeros, noise, another filesystem)
    is refused and left as it is, as the ESP32 refuses it ("The filesystem appears to be
    corrupted"): it may hold a game someone wants back."""
    state = opts["state"]
    extra = {"board_id": opts["board_id"].encode()} if opts["board_id"] else {}
    if opts["ca"]:
        try:
            with open(opts["ca"], "rb") as f:
                extra["ca"] = f.read()
        except OSError:
            fail("cannot read %s" % opts["ca"])
    if opts["buzzer"] is not None:  # a piezo on this GPIO ("off": none), over board.cfg's
        if opts["buzzer"] != "off":
            try:
                extra["buzzer_pin"] = int(opts["buzzer"])
            except ValueError:
                fail("--buzzer takes a GPIO number or off")
        else:
            extra["buzzer_pin"] = -1
    if clock is not None:
        extra["clock"] = clock
    try:
        return build(display=opts["display"], state_dir=state, link_path=opts["link"],
                     config=config, wlan=wlan, flash_timing=TIMINGS[opts["flash_timing"]],
                     flash_wait=flash_wait, **extra)
    except (OSError, ValueError) as exc:
        if state is None:
            raise
        image = state + "/flash.img"
        if isinstance(exc, ValueError):
            fail("--state %s: %s" % (state, exc))
        if exc.args and exc.args[0] in (5, 22, 84):  # EIO, EINVAL, EILSEQ: littlefs corrupt
            fail("--state %s: %s holds something that is not a littlefs filesystem (an "
                 "erased image would be formatted; this one is not erased): nothing was "
                 "changed; to start with a fresh flash, move it away or give another "
                 "--state folder" % (state, image))
        fail("--state %s: cannot use %s: OSError %s" % (state, image, exc))


def settings_from(opts, current):
    """New-game settings from the flags, or None when no setting flag was given."""
    if not (opts["rules"] or opts["distance"] or opts["sets"] or opts["first"]
            or opts["teams"]):
        return None
    rules = opts["rules"] or current["rules"]
    distance = current["distance"]
    try:
        if opts["distance"]:
            parts = opts["distance"].split(",")
            if len(parts) not in (1, 2):
                raise ValueError
            distance = (int(parts[0]), int(parts[-1]))
        sets = int(opts["sets"]) if opts["sets"] else 1
        first = int(opts["first"]) if opts["first"] else 1
    except ValueError:
        fail("settings: --distance N[,M], --sets N and --first P take whole numbers")
    return {"rules": rules, "distance": distance, "sets": sets, "first": first,
            "teams": 1 if opts["teams"] else 0}


def choose_settings(app, opts):
    """New-game settings from the flags, checked against the game already on flash."""
    settings = settings_from(opts, app.game.state())
    if opts["new_game"] and settings is None:
        st = app.game.state()
        settings = {
            "rules": st["rules"], "distance": st["distance"],
            "sets": st.get("best_of", 1), "first": st.get("first", 1),
            "teams": 0 if st["members"] is None else 1,
        }
    if settings is not None and app.stored and not opts["new_game"]:
        fail("a game is already in the state folder: add --new-game to start over")
    return settings


def state_problem(st):
    """What breaks the board-state invariants in `st`, or None."""
    from rules_core.settings import PAST, has

    for p in (0, 1):
        score, distance = st["score"][p], st["distance"][p]
        if score < 0:
            return "negative score"
        if st["remaining"][p] != max(0, distance - score):
            return "remaining is not distance - score"
        if not has(st["rules"], PAST) and score > distance:
            return "score past a capped distance"
        if st["innings"][p] < 0 or st["high"][p] < 0:
            return "negative count"
        if st["sets"][p] * 2 > st["best_of"] + 1:
            return "more sets won than the match has"
    if st["turn"] not in (1, 2):
        return "turn %r" % (st["turn"],)
    if st["status"] not in ("playing", "break", "finished"):
        return "status %r" % (st["status"],)
    if (st["status"] == "finished") != (st["winner"] is not None):
        return "winner and status disagree"
    if st["winner"] not in (None, 1, 2, "tie"):
        return "winner %r" % (st["winner"],)
    return None


def network(opts, clock):
    """The simulated club WiFi (tools.sim.board.wlan) and the board.cfg to write, if any."""
    config = None
    if opts["config"]:
        try:
            with open(opts["config"], "rb") as f:
                config = f.read()
        except OSError:
            fail("cannot read %s" % opts["config"])
    ap = ("club", "pinboard")
    if opts["wifi"]:
        ssid, sep, password = opts["wifi"].partition(":")
        if not sep or not ssid:
            fail("--wifi takes SSID:PASSWORD")
        ap = (ssid, password)
    from tools.sim.board.wlan import FakeWLAN

    return config, FakeWLAN(clock, ap)


def run_timeline(sim, app, levels, speed, check=False, now=None, wlan=None, display_log=False):
    last_state = None
    last_shown = None
    checked = 0
    end = levels.end_ms + TAIL_MS
    started = time.ticks_ms()
    # Jumps only where the board's whole life is in the state and the display: not when
    # every display change is logged, and with a network only while the WiFi is down.
    stepping = speed > 0 or display_log
    skip = None if stepping else IdleSkip(sim, app, levels, tick, STEP_MS, now)
    net = getattr(app.board, "net", None)
    if net is not None:
        from boardlib import netstream
        from tools import linkcodes
        from tools.sim.board import netstate

        on_the_broker = netstate.ON_THE_BROKER
        away = (netstream.OFF, netstream.JOIN, netstream.WAIT)  # nothing reaches the broker
        if skip is not None:
            skip.stride_ms = linkcodes.HEARTBEAT_MS  # every heartbeat the board would send
        heard = _hear_host(net)
    paced_from = None  # (board time, real time) since the link began waiting on the broker
    stall = Stall(sim.flash, STEP_MS)
    if display_log:
        from tools.sim.words import under_digits
    t = 0
    while t <= end:
        if now is not None:
            now[0] = t
        sim.set_levels(*levels.at(t))
        if wlan is not None:
            wlan.up = bool(levels.net)
        wait = tick(app, t)
        if display_log:  # after the step: a picture the display was given
            shown = "[%s]" % sim.visible()
            words = under_digits(app.menu.shown if app.menu is not None else None,
                                 app.check is not None)
            if words:
                shown += "  " + words  # the menu item the menu drew: what the digits show
            if shown != last_shown:
                last_shown = shown
                sys.stderr.write("display %d: %s\n" % (t, shown))
        if check and app.changes != last_state:
            last_state = app.changes
            problem = state_problem(app.game.state())
            if problem:
                sys.stderr.write("sim: at %d ms: %s: %s\n" % (t, problem, app.game.state_json()))
                sys.exit(3)
            checked += 1
        # What the flash took in that step (an erase is tens of ms) the board spent stalled:
        # its clock moves on by that much before its next poll.
        t += stall.take_ms()
        if speed > 0:
            ahead = int(t / speed) - time.ticks_diff(time.ticks_ms(), started)
            if ahead > 0:
                time.sleep_ms(ahead)
        elif net is not None and (talking(heard, net, t, netstream.UP)
                                  or net.state in on_the_broker):
            # The broker is a real program, answering in real time: while the board waits
            # on it, the board's clock keeps real time, so that a handshake of 50 ms is not
            # taken for a broker that timed out after 10 s of board time. So is the host
            # that asks the board questions.
            if paced_from is None:
                paced_from = (t, time.ticks_ms())
            ahead = (t - paced_from[0]) - time.ticks_diff(time.ticks_ms(), paced_from[1])
            if ahead > 0:
                time.sleep_ms(ahead)
        else:
            paced_from = None
        if skip is None or (net is not None and (wlan.up or net.state not in away)):
            t += STEP_MS
        else:
            t = skip.next_time(_wakes_at(app, levels, t, wait), end)  # idle: in strides
    if check:
        sys.stderr.write("checked: %d board states\n" % checked)


def _wakes_at(app, levels, t, wait):
    """When the board, which sleeps `wait` ms after its step at `t` unless a pin changes or
    the host's bytes come (firmware.run.Runner), steps next: its deadline or the timeline's
    next change, on the 5 ms grid of the steps, and never past a whole second (where
    IdleSkip looks whether the board is idle). Steps in between would find nothing due:
    the board does not make them either, so a deadline the firmware forgets to ask for is
    missed here as it would be on the table. A `tick` that says no wait (None: a
    measuring one) is stepped every 5 ms."""
    step = t + STEP_MS
    if wait is None or wait <= STEP_MS or (app.link_any is not None and app.link_any()):
        return step
    due = t + wait
    coming = levels.next_ms()
    if coming is not None and coming < due:
        due = coming
    second = (step + _SECOND_MS - 1) // _SECOND_MS * _SECOND_MS
    if due > second:
        due = second
    due = (due + STEP_MS - 1) // STEP_MS * STEP_MS
    return due if due > step else step


def _kept(name):
    pass


def keep_link_modules():
    """The modules the network link loads for a while and drops (boardlib/netdial.py,
    netlogin.py, netdns.py, nettls.py, and netgate.py, which a TLS board keeps while
    connected) imported now and kept: with --heap-budget the code is a frozen board's, in
    flash, where nothing is dropped and an import costs no heap."""
    from boardlib import mqttlink, netstream

    mqttlink.forget = netstream.forget = _kept
    import boardlib.netdial  # noqa: F401
    import boardlib.netdns  # noqa: F401
    import boardlib.netgate  # noqa: F401
    import boardlib.netlogin  # noqa: F401
    import boardlib.nettls  # noqa: F401


def _hear_host(net):
    """[board time of the host's last command, link state last seen]: the umqtt client's
    callback wrapped, so the firmware itself is unchanged."""
    heard = [None, net.state]
    message = net.client.cb

    def on_message(topic, msg):
        heard[0] = -1  # stamped with board time by talking()
        message(topic, msg)

    net.client.cb = on_message
    return heard


def talking(heard, net, t, up):
    """Whether the host is in a conversation with the board at board time `t` (`up`: the
    link's state when it is on the broker)."""
    if heard[0] == -1 or (net.state == up and heard[1] != up):
        heard[0] = t
    heard[1] = net.state
    return heard[0] is not None and t - heard[0] < TALK_MS


class _SeededOs:
    """The `os` module with a urandom of its own (seeded_urandom)."""


def seeded_urandom(seed):
    """From now on `import os` gives the firmware an `os` whose urandom bytes come from
    `seed` (the same bytes every run), the rest being the port's own. The firmware's
    random bytes (the game's identity, the boot's id) go into its frames and snapshots,
    and so into the CRCs it works out: on a 32-bit board a value of 2**30 or more is an
    integer object in the heap and a smaller one is not, so which CRCs take heap, and when
    the collector runs, move with those bytes. The bench's heap figures (--seed) are then
    the same every run; a board's own identity moves them by a few hundred bytes
    (docs/performance.md, "What the heap figures count")."""
    import os

    state = [seed & 0x7FFFFFFF]
    pool = bytearray(256)
    for i in range(len(pool)):  # a linear congruential generator: nothing to import
        state[0] = (state[0] * 1103515245 + 12345) & 0x7FFFFFFF
        pool[i] = state[0] >> 16 & 0xFF
    pool = bytes(pool)
    at = [0]

    def urandom(n):
        start = at[0]
        if start + n > len(pool):
            start = 0
        at[0] = start + n
        return pool[start:start + n]  # one bytes object, as the port's own urandom makes

    seeded = _SeededOs()
    for name in dir(os):
        if not name.startswith("__"):
            setattr(seeded, name, getattr(os, name))
    seeded.urandom = urandom
    sys.modules["os"] = seeded


def main(argv):
    opts = parse_args(argv)
    if opts["seed"] is not None:
        seeded_urandom(opts["seed"])
    if opts["frozen"]:  # the modules a stock build has frozen (tools.bench's heap figures)
        from tools.sim.board.frozenrom import mount_frozen

        mount_frozen(opts["frozen"])
    if not opts["timeline"] and not opts["interactive"]:
        fail("give --timeline FILE or --interactive")
    events = end_ms = None
    if opts["timeline"]:
        from tools.sim.board import timeline

        name = opts["timeline"]
        try:  # every line checked before the board starts; nothing kept
            with open(name, "rb") as f:
                end_ms = timeline.end_of(f)
            events = timeline.events(open(name, "rb"))  # read as it is played
            if opts["heap_budget"] is not None:
                # read whole before the budget is set: reading a line takes the
                # simulator pieces of heap (a 512-byte read, the line's words) that no
                # board takes, and a budget should fail for the firmware's needs alone
                events = list(events)
        except OSError as exc:
            fail(ReadError(exc).text(name))
        except ReadError as exc:
            fail(exc.text(name))
        except ValueError as exc:
            fail("%s:%s" % (name, exc))
    # The simulated hardware first: on a board it is not in the heap.
    now = [0]  # the board's time, for the simulated WiFi
    config, wlan = network(opts, (lambda: now[0]) if events is not None else time.ticks_ms)
    # Timeline mode: the flash's time is board time (run_timeline moves the clock);
    # interactive mode runs in real time, and so does the flash. The buzzer's PWM stamps
    # its changes with the board's time too.
    sim = build_board(opts, config, wlan, None if events is not None else time.sleep_us,
                      (lambda: now[0]) if events is not None else None)
    levels = None
    if events is not None:
        levels = timeline.Levels(events, end_ms=end_ms)
    ballast = None
    if opts["heap_budget"] is not None:
        # every module the run will import, before the heap is pinned (the rules modules
        # too, which rules_core.game imports with the first game of their rules)
        import rules_core.snapshot  # noqa: F401
        from rules_core.settings import RULES_TABLE

        for row in RULES_TABLE:
            __import__("rules_core." + row[1])

        if sim.board.net is not None:
            keep_link_modules()

        if opts["interactive"]:
            import tools.sim.board.interactive  # noqa: F401
        try:
            ballast = pin(opts["heap_budget"])
        except ValueError as exc:
            fail(str(exc))
    app = App(sim.board)
    app.load()
    settings = choose_settings(app, opts)
    if settings is not None:
        try:
            app.new_game(settings, 0)
        except ValueError as exc:
            fail("settings: %s" % exc)
    app.start(0)
    net = sim.board.net
    if net is not None and net.net["tls"]:
        # the TLS context made once the game is read, as firmware.startapp makes it
        from boardlib import netstream, nettls

        nettls.prepare(net)
        netstream.forget("nettls")
    if events is not None:
        run_timeline(sim, app, levels, opts["speed"], opts["check"], now, wlan,
                     opts["display_log"])
        if ballast is not None:
            import gc

            gc.collect()
            free = gc.mem_free()
            largest = largest_free(free)
            # The board's life ends here: what follows is the simulator's report, which no
            # board makes, so it does not come out of the board's budget.
            ballast = None
            gc.collect()
            sys.stderr.write("heap: %d of %d budget bytes free at the end, largest block "
                             "%d\n" % (free, opts["heap_budget"], largest))
            net = app.board.net
            if net is not None:  # whether the board came online, and how (tools/bench/heap.py)
                from tools.sim.board import netstate

                sys.stderr.write("net: %s, %s, %d connections, last error %d\n" % (
                    netstate.NAMES.get(net.state, net.state),
                    "tls" if net.net["tls"] else "plain", net.connects, net.last_error))
        print(app.game.state_json())
        if opts["show_display"]:
            sys.stderr.write("display: [%s]\n" % sim.visible())
        return
    from tools.sim.board.interactive import run_interactive

    run_interactive(sim, app)


if __name__ == "__main__":  # tests import run_timeline
    main(sys.argv[1:])
