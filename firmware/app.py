"""The scoreboard application: inputs -> shots -> rules -> journal -> display and link.

    from firmware.app import App
    app = App(board)              # board: a profile built by firmware.hw or tools.sim.board
    app.boot(now_ms)              # resume the game from flash, say hello on the link
    while True:
        wait_ms = app.step(now_ms)   # what is due: inputs, link, display, upkeep, watchdog
        ...                          # sleep wait_ms, or until a pin changes
        #                              (app.spots_changed or app.buttons_changed)
        # app.buzzer (firmware.sound): a call playing is a deadline step() wakes for

The parts are `poll_inputs` (sensors, buttons, shots, rules, journal), `service_link`,
`refresh_display` and `upkeep` (journal compaction while no shot is in progress); `step`
runs each only when it is due: the inputs when a pin has changed (the pins' interrupts fill
`spots_changed` or `buttons_changed`) or one of their timers runs out, the link when the
host has sent bytes or a heartbeat is due, the display when its picture changes, upkeep
after events. Every step takes the time as an argument, so the same code runs from the
board's loop (`firmware.run`) and in virtual time in the simulator. Order of work for a
scored shot: the rules apply it, the journal stores it (flushed), then the display and the
link show it: what a player has seen on the display is on flash.
"""

from collections import deque

from boardlib import inputs, layout, shot
from boardlib.display import Display
from boardlib.inputs import INDEX
from boardlib.journal import READERS, GameStore, stores
from firmware import errors
from firmware.screens import ERR, Screens
from rules_core import Game, GameError
from rules_core.common import FOUL_NAMES
from rules_core.savedstate import SAVE_SIZE, STATE_SIZE, save_into
from rules_core.settings import RULES_IDS

try:
    from time import ticks_add, ticks_diff
except ImportError:  # CPython: boardlib.ticks wraps as the ESP32 does
    from boardlib.ticks import ticks_add, ticks_diff

try:
    from micropython import const
except ImportError:  # CPython: the integer itself
    const = int


_STORAGE_RETRY_MS = const(5000)  # how often a failing flash is tried again between shots
_ENOSPC = const(28)
_BUTTONS = const(4)  # len(shot.BUTTON_NAMES)
# The board's schedule (App.step). An idle board wakes only for the watchdog and the
# link's heartbeat; these are the longest waits and the steps of the busy parts.
_IDLE_MS = const(2000)  # the longest sleep: nothing is due, no pin changes
# The watchdog is fed at a step _FEED_MS after the last feed at the soonest (the link's
# heartbeat wakes the board every 2 s: the feed goes with it), and half its timeout after
# it at the latest (watchdog_ms is at least 2000; none armed: no wake for it at all).
_FEED_MS = const(1000)
_LINK_MS = const(10)  # a link without a byte count (the network) is served this often
_BUSY_MS = const(10)  # the wiring check polls the inputs every tick
_UPKEEP_MS = const(250)  # upkeep waits while a shot is in progress
_RETRY_MS = const(40)  # a part that raised is tried again after this
_FAR_MS = const(1 << 28)  # "not due": far, and within half the ticks period
_SPOTS = const(1)  # the groups of inputs whose pins changed, as bits (poll_inputs)
_BUTTONS_CHANGED = const(2)
_SETTLE = const(4)  # (not an interrupt: the shot's settle time running out)
_PRESS = const(1)  # boardlib.inputs' PRESS and HOLD (tests/test_app.py checks them)
_HOLD = const(2)
# boardlib.link's numbers that the application uses (tools/linkcodes.py has the host's copy
# of them all; tests/test_board_codes.py checks these against it).
_PROTOCOL_VERSION = const(2)
_CMD_NEW_GAME = const(0x81)
_CMD_UNDO = const(0x82)
_CMD_STATE = const(0x83)
_CMD_PING = const(0x84)
_CMD_EVENT = const(0x86)
_CMD_LOGGED = const(0x87)
_CMD_RESTORE = const(0x88)
_ERR_REFUSED = const(5)
_ERR_ASKED = const(6)
_ERR_BUSY = const(7)
_ERR_STORAGE = const(18)
_INPUTS = const(0)  # App.step's parts
_LINK = const(1)
_DISPLAY = const(2)
_UPKEEP = const(3)
# The bit of each rules id's second foul code (a held `foul`, shot.SECOND_FOUL) in an
# event record, in RULES_IDS order; and whether a held `carom` is a casino there.
_SECOND_FOUL = tuple(1 << FOUL_NAMES.index(shot.SECOND_FOUL[r]) for r in RULES_IDS)
_CASINO = tuple(r in shot.CASINO_RULES for r in RULES_IDS)


class App:
    def __init__(self, board, read=None):
        self.board = board
        cfg = board.config
        config_error = board.config_error
        self.sensors = inputs.SpotSensors(
            glitch_ms=cfg["glitch_ms"], stuck_ms=cfg["stuck_ms"]
        )
        self.buttons = inputs.Buttons(_BUTTONS, cfg["debounce_ms"], cfg["hold_ms"])
        self.assembler = shot.ShotAssembler(settle_ms=cfg["settle_ms"])
        self.display = board.display if board.display is not None else Display.none()
        self.display.brightness(cfg["brightness"])
        self.screens = Screens(self.display)
        self.buzzer = None  # the audible calls; None: no buzzer, silent
        if board.buzzer is not None:  # a board without one never loads the calls' code
            from firmware import sound

            self.sound = sound
            self.buzzer = sound.make(board)
        self._sounding = False  # a call is playing: its next step is a deadline (step)
        # The board's two stores and what firmware.startapp read of them before this
        # module came (boardlib.journal_load.read), or the stores alone, which load()
        # reads at boot
        read = read or stores(board.data_dir)
        self._read = read
        self.store = read[0]
        self.numbering = self.store.codec
        self.store.between = self._feed_between
        self._store_behind = self.store.behind  # (bound once: asked after every event)
        # The last game replaced while it had events, until the host says it has it all
        # (CMD_LOGGED): a new game never takes a game away before it is logged.
        self.kept_store = read[1]  # (its codec: the kept game's GameNumbering)
        self.kept = None
        # (new-game settings from the host, the command's number), waiting for the
        # players' ok
        self.asked = None
        self.link = board.link
        self.game = None
        self.changes = 0  # goes up by one at every change of the game: a cheap "has it?"
        self.menu = None
        self.check = None  # the builders' wiring check while it runs (firmware.check)
        self.stored = False
        self._started = False  # nothing goes to the display or the link before start()
        self.notices = []  # error codes to show once at boot
        if config_error:
            self.notices.append(config_error)
        self._faults = 0
        self.storage_error = 0  # 43 flash full, 44 flash failing: shown until a write works
        self._storage_retry_at = 0
        self._down = -1  # the down mask the assembler saw last (-1: none yet)
        self._moved = 0  # the assembler was told of spots or buttons since its last poll
        # The pins' levels as last read (bit i: spot i+1 standing; button i pressed)
        self._spot_levels = self._button_levels = 0
        # When each group of inputs has something to do with no pin changing (ticks): the
        # spots' timers, the soonest button timer, the shot settling by itself
        self._spots_at = self._buttons_at = self._settle_at = 0
        # The schedule (step): when each part is next due, in ticks. A pin's interrupt
        # handler is its group's `append`, into a deque of one entry: "changed since the
        # last poll". A handler in Python would be a Python call at every change of a pin
        # (about 1,600 instructions, 8 a shot); the deque's is C, takes no memory (the
        # deque keeps its last entry only: a line that chatters between two polls leaves
        # one), and is cheap to ask where the board's loop asks at every tick while it
        # sleeps (firmware.run.Wake). Pins that cannot interrupt are read at every step.
        # One entry each to begin with: the first poll reads every pin.
        self.spots_changed = deque((), 1)
        self.spots_changed.append(None)
        self.buttons_changed = deque((), 1)
        self.buttons_changed.append(None)
        self.errors = 0  # exceptions the parts raised (counted, the board goes on)
        self._failed = 0  # a part raised since the watchdog was last fed: it is not fed
        self._inputs_at = self._link_at = self._upkeep_at = self._feed_at = 0
        self._feed_by = 0  # the last moment for the next feed
        self._rest_at = 0  # the soonest time of any part but the inputs (step)
        self._now = 0  # the step's time and the part it is at
        self._which = _INPUTS
        watchdog_ms = cfg.get("watchdog_ms", 0)
        self._feed_every = watchdog_ms // 2 if watchdog_ms else _FAR_MS
        self._every_step = 0 if board.watch_inputs(
            self.spots_changed.append, self.buttons_changed.append) else (
            _SPOTS | _BUTTONS_CHANGED)
        self._read_spots = board.read_spots  # (bound once: a lookup of the class each poll)
        self._read_buttons = board.read_buttons
        # The inputs' own calls at their polls, bound once as well. (They also keep this
        # object's attribute table with room: MicroPython grows it only when it is full,
        # and a name it does not hold, every method's, is looked for until an empty slot;
        # docs/performance.md, "The inputs' side and the step loop".)
        self._update_spots = self.sensors.update
        self._update_buttons = self.buttons.update
        self._settle = self.assembler.poll
        self._hand_on = self.assembler.button
        # Made once for the event path: a shot's record, the state the link sends.
        self._record = bytearray(4)
        self._saved = bytearray(SAVE_SIZE)
        self._state_view = memoryview(self._saved)[:STATE_SIZE]
        # Bytes from the host wake the link (its stream's any(): C on the board); a link
        # without it, or without `due` (the network), is served every _LINK_MS.
        self.link_any = getattr(self.link, "any", None)
        self._link_bytes = self.link_any or bool  # (bool(): never any)
        # A link that keeps the STATE frame's events' CRC as the history grows is told how
        # often the game's history was cut (boardlib.link.Link.history_cuts); one that
        # passes the frames on to others (the network's) is not, and takes it whole.
        self._link_times = self.link_any is not None and hasattr(self.link, "due")
        self._cuts_told = hasattr(self.link, "history_cuts")

    # -- start-up ---------------------------------------------------------------------------

    def boot(self, now_ms, settings=None):
        """Resume the stored game (or start one) and tell the display and the host.

        `settings` (new-game settings) replace the stored game before anything is shown:
        the simulator's flags, say. Without a stored game the board's default game starts."""
        self.load()
        if settings is not None:
            self.new_game(settings, now_ms)
        self.start(now_ms)

    def load(self):
        """The stored game read from flash (unless firmware.startapp read it before); nothing
        is shown or sent yet."""
        read = self._read
        self._read = None
        if len(read) == 2:  # the stores alone: read them now
            from boardlib import journal_load  # used once, at boot: dropped below

            read = journal_load.read(read)
            # Both read: the collector takes the reader's code back (and the snapshot's
            # reader, its codec's unpack) before a new game is made in its place
            errors.forget(READERS)
            del journal_load  # (nor does this name hold it)
        game, status, self.kept = read[2:]
        if status == GameStore.TRUNCATED:
            self.notices.append(errors.JOURNAL_CUT)
        elif status == GameStore.CORRUPT:
            self.notices.append(errors.JOURNAL_LOST)
        self.stored = game is not None  # a game (finished or not) was on flash
        if game is None:
            game = self._new_game_from(self.board.config["game"])
            self.numbering.new_identity()
            App._store(self, self.store.new_game, game)
        self.game = game
        self.changes += 1

    def start(self, now_ms):
        """Say hello on the link, send the state, put the scores on the display."""
        self._started = True
        # every part is due at the first step
        self._inputs_at = self._link_at = self._upkeep_at = self._feed_at = now_ms
        self._feed_by = self._rest_at = now_ms
        self._number_link()
        if self.link is not None:
            self.link.send_hello(_PROTOCOL_VERSION, self.board.reset_cause, now_ms)
        App._changed(self, now_ms, shot_event=False)  # the state goes out after the hello
        self.screens.show_reset(self.board.reset_cause, now_ms)
        for code in self.notices:
            self.screens.flash(ERR, code, now_ms)
            if self.link is not None and errors.is_storage(code):
                # the host hears of a game resumed short (or lost) with the board's code
                self.link.send_error(_ERR_STORAGE, "Err %d" % code)
        if self.storage_error:
            App._storage_changed(self)

    def _new_game_from(self, settings):
        d = settings["distance"]
        return Game(
            settings["rules"],
            distance=(d[0], d[1]),
            sets=settings.get("sets", 1),
            first=settings.get("first", 1),
            teams=settings.get("teams", 0),
        )

    # -- the schedule -----------------------------------------------------------------------

    def step(self, now_ms):
        """Run every part that is due at now_ms; return the ms until one is due again
        (0 to _IDLE_MS), unless a pin changes first.

        A part's exception comes out of step() with `_which` naming the part: the caller
        (firmware.run: the task, tick) hands it to part_failed(), which counts it, has the
        part tried again _RETRY_MS later and keeps the watchdog from being fed until a feed
        period has passed without any part raising, then steps again: the other parts go
        on. (The exception is caught there, not here: naming it in an `except ... as`
        takes a frame bigger than MicroPython keeps on the C stack.)

        The board's hot path is made of few calls (a call of a Python function costs
        more than a dozen attribute reads) whose frames stay within what MicroPython
        keeps on the C stack where it can (11 words, py/objfun.c): a bigger frame comes
        out of the heap at every call (docs/performance.md). Its own methods are called
        through the class, `App.poll_inputs(self, now_ms)`: a name looked up on the object
        is looked for in the object's table of attributes first, up to an empty slot, and
        only then in the class's (py/objtype.c). (Such a call keeps one word more of the
        frame than `self.name(...)`: where a frame is at 11, the call stays a method's.)"""
        self._now = now_ms
        diff = ticks_diff  # (a local: a module's global is a lookup at every use)
        wait = diff(self._inputs_at, now_ms)
        if wait <= 0 or self.spots_changed or self.buttons_changed:  # (`_which` is
            # _INPUTS outside _step_rest)
            App.poll_inputs(self, now_ms)
            wait = diff(self._inputs_at, now_ms)
        # The other parts' soonest time is kept as one (`_rest_at`): a step with none of
        # theirs due (a pin's change, an input's timer: most steps of a shot) ends here.
        # What the inputs do that makes another part due sooner sets `_rest_at` to now
        # (an event's upkeep) or marks the display dirty; bytes from the host, a buzzer
        # call and the watchdog's feed (at the first step after `_feed_at`, no wake of its
        # own) are asked for here.
        left = diff(self._rest_at, now_ms)
        if (left <= 0 or diff(now_ms, self._feed_at) >= 0 or self.screens.dirty
                or self._sounding or self._link_bytes()):
            return App._step_rest(self, now_ms, wait)
        if left < wait:
            wait = left
        return wait if wait > 0 else 0

    def _step_rest(self, now_ms, wait):
        """The link, the display, upkeep, the watchdog and a buzzer call, each when it is
        due; then `_rest_at`, and the ms until any part is due (`wait`: the inputs')."""
        # Each part's time is read once: a part that does not run leaves its own time as
        # it was, and no part moves the time of one checked before it (the inputs', the
        # link's and the display's are theirs alone), so what is left of each is the wait.
        soon = _IDLE_MS  # the soonest of these parts, in ms from now
        diff = ticks_diff  # (a local: a module's global is a lookup at every use)
        link = self.link
        if link is not None:
            left = diff(self._link_at, now_ms)
            # bytes from the host: the stream's any(), C on the board
            if left <= 0 or self._link_bytes():
                self._which = _LINK
                self.service_link(now_ms)
                left = diff(self._link_at, now_ms)
            if left < soon:
                soon = left
        link = self.screens  # (the frame's slot again: it stays within 11 words)
        left = diff(link.due, now_ms)
        if link.dirty or left <= 0:
            self._which = _DISPLAY
            self.refresh_display(now_ms)
            left = diff(link.due, now_ms)
        if left < soon:
            soon = left
        left = diff(self._upkeep_at, now_ms)
        if left <= 0:
            self._which = _UPKEEP
            self._upkeep_at = ticks_add(now_ms, _FAR_MS)
            App.upkeep(self, now_ms)
            left = diff(self._upkeep_at, now_ms)
        if left < soon:
            soon = left
        if diff(now_ms, self._feed_at) >= 0:
            App._feed(self, now_ms)
        left = diff(self._feed_by, now_ms)
        if left < soon:
            soon = left
        if self._sounding:  # a buzzer call: its steps are deadlines too
            App._sound(self, now_ms)
            if self._sounding:
                left = diff(self.buzzer.due, now_ms)
                if left < soon:
                    soon = left
        self._rest_at = ticks_add(now_ms, soon)
        self._which = _INPUTS
        if self.screens.dirty:  # (upkeep may have put a storage error up)
            return 0
        if soon < wait:
            wait = soon
        if wait < 0:
            return 0
        return wait if wait < _IDLE_MS else _IDLE_MS

    def part_failed(self, exc):
        """The part step() was at raised `exc`: count it, try the part again _RETRY_MS
        later, and feed no watchdog this feed period."""
        self.errors += 1
        self._failed = 1
        if self.errors < 4:
            print("step error:", repr(exc))
        part = self._which
        self._which = _INPUTS
        now_ms = self._now
        self._rest_at = now_ms  # the next step runs every part that is due
        retry = ticks_add(now_ms, _RETRY_MS)  # type: ignore[type-var]  # a tick value
        if part == _INPUTS:
            self._inputs_at = retry
        elif part == _LINK:
            self._link_at = retry
        elif part == _DISPLAY:
            self.screens.dirty = False
            self.screens.due = retry
        else:
            self._upkeep_at = ticks_add(now_ms, _UPKEEP_MS)  # type: ignore[type-var]

    def _feed(self, now_ms):
        # Fed only if no part raised in the last period: a part that keeps failing resets
        # the board rather than freezing the scores.
        self._feed_at = ticks_add(now_ms, _FEED_MS)
        self._feed_by = ticks_add(now_ms, self._feed_every)
        if not self._failed:
            self.board.wdt.feed()
        self._failed = 0

    # -- the parts ---------------------------------------------------------------------------

    def poll_inputs(self, now_ms):
        """The inputs, by group: the spots when one changed or their timer runs out, the
        buttons when one changed or is settling, the shot's assembler when either moved it
        or its settle time runs out; then when they are due again with no pin changing,
        the soonest of their timers. The timers are ticks, a far one when idle (one that
        comes round again after days only makes a poll that finds nothing to do)."""
        if self.check is not None:  # the builders' wiring check (firmware.check)
            self._inputs_at = ticks_add(now_ms, _BUSY_MS)
            return self.check.run(self, now_ms)
        groups = self._every_step  # (pins that cannot interrupt: every step)
        if self.spots_changed:
            self.spots_changed.popleft()  # (emptied before the pins are read)
            groups |= _SPOTS
        if self.buttons_changed:
            self.buttons_changed.popleft()
            groups |= _BUTTONS_CHANGED
        diff = ticks_diff  # (a local: a module's global is a lookup at every use)
        # (The spots and the assembler's settling here, not in functions of their own: a
        # call costs as much as a dozen attribute reads. `at` serves one thing after
        # another: a frame over 11 words comes from the heap at every call.)
        # A pin is read only when its group's interrupt came: at a timer's end with no
        # interrupt since, the levels are what was read last (every pin interrupts on
        # each change; pins that cannot are read at every poll, `_every_step`).
        if groups & _SPOTS:
            self._spot_levels = self._read_spots()
        if groups & _SPOTS or diff(now_ms, self._spots_at) >= 0:
            at = self._update_spots(self._spot_levels, now_ms)  # the spots down
            if self.sensors.fault != self._faults:
                App._faults_changed(self, now_ms)
            # The assembler cares only about a change of the down mask, and while a shot
            # is in progress about spots that flap: a report the glitch filter has not
            # passed yet (a pin falling or standing, 40 ms before it counts) moves nothing
            # there.
            if at != self._down or (self.sensors.flapping and self.assembler.busy):
                self._down = at
                self.assembler.spots(at, now_ms, self.sensors.flapping)
                self._moved = 1
            at = self.sensors.next_at
            self._spots_at = ticks_add(now_ms, _FAR_MS) if at is None else at
        if groups & _BUTTONS_CHANGED:
            self._button_levels = self._read_buttons()
        if groups & _BUTTONS_CHANGED or diff(now_ms, self._buttons_at) >= 0:
            # The buttons together, as masks (boardlib.inputs.Buttons); each press or hold,
            # in the buttons' order, goes to the setup menu (or the host's question) or the
            # shot's assembler. (`groups` is the kind: the frame's slot again.)
            at = self._update_buttons(self._button_levels, now_ms)  # the buttons' results
            while at:
                low = at & -at
                at ^= low
                groups = _HOLD if self.buttons.holds & low else _PRESS
                if self.asked is not None or self.menu is not None:
                    self._menu_button(INDEX[low], groups, now_ms)
                else:
                    self._hand_on(INDEX[low], groups, now_ms)
                    self._moved = 1
            self._buttons_at = ticks_add(now_ms, self.buttons.left)  # (far: none)
        if self._moved or diff(now_ms, self._settle_at) >= 0:
            # The assembler's result, if it has one; then when it next has something to
            # do by itself (the shot in progress settles, a result waits).
            self._moved = 0
            at = self._settle(now_ms)
            if at:
                App._take(self, at, now_ms)
            at = self.assembler.left  # what timer() would say after the poll, -1 for None
            self._settle_at = ticks_add(now_ms, _FAR_MS if at < 0 else at)
            # Pins set? Between shots the spots without a pin go to the display
            # (docs/inputs.md); nothing while a shot is in progress.
            at = 0 if self.assembler.busy or self._down < 0 else self._down
            if at != self.screens.empty:
                self.screens.empty = at
                self.screens.dirty = True
        at = self._spots_at
        groups = self._buttons_at  # (the frame's slot again)
        if diff(groups, at) < 0:
            at = groups
        groups = self._settle_at
        if diff(groups, at) < 0:
            at = groups
        self._inputs_at = now_ms if self._every_step else at

    def _faults_changed(self, now_ms):
        faults = self.sensors.fault
        if faults & ~self._faults:
            App._call_error(self, now_ms)  # a new sensor fault
        self._faults = faults
        self._show_fault()

    def _call_error(self, now_ms):
        if self.buzzer is not None and self._started:
            self.buzzer.play(self.sound.calls.ERROR, now_ms)
            self._sounding = self.buzzer.busy

    def _sound(self, now_ms):
        """The buzzer's call plays on: its next step when it is due (boardlib.buzzer)."""
        buzzer = self.buzzer
        if ticks_diff(now_ms, buzzer.due) >= 0:
            buzzer.poll(now_ms)
        self._sounding = buzzer.busy

    def _show_fault(self):
        # a sensor fault first (the players can fix it), else a storage error
        code = errors.sensor_code(self.sensors) if self._faults else 0
        screens = self.screens
        screens.fault_code = code or self.storage_error
        screens.dirty = True

    def _take(self, event, now_ms):
        if self.asked is not None and event:
            App._answer_ask(self, False, now_ms)  # play went on: the players said no
        if event == shot.SHOT:
            App._scored_shot(self, now_ms)
        elif event == shot.UNDO:
            self.undo(now_ms)
        elif event == shot.MENU:
            self._open_menu(now_ms)

    def _menu_button(self, which, kind, now_ms):
        if self.asked is not None:
            # The host asked for a new game over an unfinished one: ok confirms it, any
            # other button keeps the game.
            App._answer_ask(self, which == shot.OK and kind == _PRESS, now_ms)
            return
        if self.menu is not None:
            settings = self.menu.button(which, kind)
            if settings is not None:
                self.new_game(settings, now_ms)
            if self.menu.closed:
                check = self.menu.check
                if self.menu.sound is not None and self.menu.sound != self.buzzer.on:
                    self.sound.switch(self.buzzer, self.menu.sound, self.board.config_path)
                    self._sounding = self.buzzer.busy
                self.menu = None
                self.screens.draw_with(None)
                if check:
                    from firmware.check import WiringCheck

                    self.check = WiringCheck(self.board, now_ms,
                                             self.board.config["hold_ms"])
                    self.screens.draw_with(self.check.draw)
                    # its first poll a tick from now (poll_inputs: every tick then)
                    self._settle_at = ticks_add(now_ms, _BUSY_MS)

    def _open_menu(self, now_ms):
        # Imported here, not at the top: a board loads the setup menu only when a player
        # opens it (the bench counts it apart, docs/performance.md).
        from firmware.menu import Menu, rematch

        st = self.game.state()
        now = rematch(st)  # a finished game's menu offers it first ("AGAIn")
        again = now if self.game.finished else None
        if again is None:
            now["first"] = st.get("first", 1)
        self.menu = Menu(now, again=again,
                         sound=None if self.buzzer is None else self.buzzer.on)
        self.screens.draw_with(self.menu.draw)
        self.assembler.reset()

    def refresh_display(self, now_ms):
        self.screens.refresh(self.game, now_ms)

    def service_link(self, now_ms):
        link = self.link
        if link is None:
            return
        cmd = link.poll(now_ms)
        if cmd:
            App._command(self, cmd, now_ms)
        net = self.board.net
        if net is not None and net.notice:  # the network failed: say why, once per try
            self.screens.flash(ERR, net.take_notice(), now_ms)
        # A link that counts its bytes (the serial one) is due at its next frame, or when
        # bytes arrive; the network link is served every _LINK_MS.
        self._link_at = link.due if self._link_times else ticks_add(now_ms, _LINK_MS)

    def upkeep(self, now_ms):
        store = self.store
        if store.compacting:
            App._compact_piece(self, now_ms)
            return
        if self.assembler.busy and not store.behind():
            self._upkeep_at = ticks_add(now_ms, _UPKEEP_MS)  # after the shot
            return
        self.game.reserve()  # room for the next events, taken between them
        if not self.storage_error:
            App._compact_piece(self, now_ms)  # begun when the journal is full
        elif ticks_diff(now_ms, self._storage_retry_at) >= 0:
            # a failing or full flash is tried again now and then: a whole snapshot of
            # the game, so that nothing is missing once it works
            self._storage_retry_at = ticks_add(now_ms, _STORAGE_RETRY_MS)
            App._store(self, self.store.maintain)
        if self.storage_error:
            self._upkeep_at = self._storage_retry_at

    # -- storage ----------------------------------------------------------------------------

    # The journal's compaction goes on in pieces, one a step, each erasing at most one
    # sector of the flash: the inputs are polled between them (docs/persistence.md,
    # "Compaction in pieces"). It is begun as soon as the journal is full, and goes on
    # while a shot is in progress; an event that comes meanwhile finishes it first.

    def _compact_piece(self, now_ms):
        # (a flash failure is kept: the next event's record() tries the snapshot again)
        if self.store.maintain_piece():
            self._upkeep_at = now_ms  # the next piece at the next step

    def _feed_between(self):
        # between the pieces of a compaction done at once: the watchdog, as _feed does
        if not self._failed:
            self.board.wdt.feed()

    def _record_event(self, game, record):
        """store.record, as _store does it, without making a bound method or a tuple."""
        self._upkeep_at = self._feed_at
        self._rest_at = self._now  # (step: upkeep is due sooner)
        if ticks_diff(self._upkeep_at, self._now) <= 0:  # (_store says why)
            self._upkeep_at = ticks_add(self._now, 1)  # type: ignore[type-var]
        record = App._journal(self, game, record)  # (the frame's slot again: the error)
        if record is not None:
            self._store_failed(record)
            return
        if self.storage_error and not self.store.needs_snapshot:
            self.storage_error = 0
            App._storage_changed(self)
        # a journal now full is compacted from the next step on (as _store has it; inline:
        # a call costs as much as a dozen attribute reads)
        if self._store_behind() and not self.storage_error:
            self._upkeep_at = ticks_add(self._now, 1)  # type: ignore[type-var]

    def _journal(self, game, record):
        """store.record(game, record): None, or the OSError it raised. (A function of its
        own: a try block takes three words of a frame, which must stay small.)"""
        try:
            self.store.record(game, record)
        except OSError as exc:
            return exc
        return None

    def _store(self, action, *args):
        """Run a store write; a flash failure becomes a storage error on the display and
        the link (the game goes on in memory), and a write that works clears it. Upkeep
        is due after it (a compaction, or trying the flash again), at the watchdog's
        next feed and never in this step: the store commits copy b's frames there, in a
        step apart from copy a's (docs/persistence.md, "Compaction in pieces")."""
        self._upkeep_at = self._feed_at
        self._rest_at = self._now
        if ticks_diff(self._upkeep_at, self._now) <= 0:
            self._upkeep_at = ticks_add(self._now, 1)  # type: ignore[type-var]
        try:
            action(*args)
        except OSError as exc:
            self._store_failed(exc)
            return False
        if self.storage_error and not self.store.needs_snapshot:
            self.storage_error = 0
            App._storage_changed(self)
        # a journal that is now full is compacted from the next step on
        if self._store_behind() and not self.storage_error:
            self._upkeep_at = ticks_add(self._now, 1)  # type: ignore[type-var]
        return True

    def _store_failed(self, exc):
        code = errors.STORAGE_FULL if exc.args and exc.args[0] == _ENOSPC else (
            errors.STORAGE_FAILED)
        if code != self.storage_error:
            self.storage_error = code
            App._storage_changed(self)

    def _storage_changed(self):
        self._show_fault()
        if self._started and self.link is not None and self.storage_error:
            self.link.send_error(_ERR_STORAGE, "Err %d" % self.storage_error)

    # -- game events ------------------------------------------------------------------------

    def _scored_shot(self, now_ms):
        game = self.game
        if game.finished:
            return  # a finished game takes only undo or a new game
        if not self.assembler.record_into(self._record, _SECOND_FOUL[game.rid],
                                          _CASINO[game.rid]):
            return  # more fouls than a record holds: a stuck finger, not a shot
        if not App._apply(self, game):
            return
        App._record_event(self, game, self._record)
        if self.link is not None and self._started:
            # The event first, then the state that counts it: a host that has the state
            # has had its chance at every event in it. (Here, not in a call of its own:
            # a call costs as much as a dozen attribute reads.)
            self.link.send_event(game.history.count, self._record, game.last_player,
                                 game.last_points, game.last_to, now_ms)
        App._changed(self, now_ms)

    def _apply(self, game):
        try:
            game.apply(self._record)
            return True
        except GameError:
            return False

    def undo(self, now_ms):
        try:
            self.game.undo()
        except GameError:
            self.screens.flash(ERR, errors.NOTHING_TO_UNDO, now_ms)
            App._call_error(self, now_ms)
            return False
        App._store(self, self.store.record_undo, self.game)
        if self.link is not None and self._started:
            self.link.send_undo(self.game.history.count, now_ms)
        App._changed(self, now_ms, shot_event=False)
        return True

    def new_game(self, settings, now_ms):
        game = self._new_game_from(settings)  # raises GameError on bad settings
        if self.game is not None and self.game.history.count:
            self._keep(self.game)
        self.game = game
        self.numbering.number = (self.numbering.number + 1) & 0xFFFF
        self.numbering.new_identity()
        self._number_link()
        App._store(self, self.store.new_game, game)
        self.assembler.reset()
        App._changed(self, now_ms, shot_event=False)

    def _keep(self, game):
        """Keep ``game`` on flash (and in memory) until the host has logged it."""
        numbering = self.kept_store.codec
        numbering.number = self.numbering.number
        numbering.game_id[:] = self.numbering.game_id
        try:
            self.kept_store.new_game(game)
        except OSError:  # a full flash loses the spare copy, never the game being played
            pass
        self.kept = game

    def _answer_ask(self, yes, now_ms):
        settings, seq = self.asked
        self.asked = None
        self.screens.draw_with(None)
        if yes:
            self.new_game(settings, now_ms)  # checked when the command came
        else:
            self.link.send_error(_ERR_REFUSED, "", seq)
            App._changed(self, now_ms, shot_event=False)

    def _number_link(self):
        if self.link is not None:
            self.link.game = self.numbering.number
            self.link.game_id[:] = self.numbering.game_id

    def _changed(self, now_ms, shot_event=True):
        self.changes += 1
        if not self._started:
            return
        screens = self.screens
        if shot_event:
            screens.after_event(self.game, now_ms, self.assembler.unset)
            if self.buzzer is not None:
                self.sound.after_shot(self.buzzer, self.game, now_ms)
                self._sounding = self.buzzer.busy
        else:
            screens.clear()
            screens.after_event(self.game, now_ms)
            screens.clear()
        if self.link is not None:
            App._send_state(self, now_ms)

    def _send_state(self, now_ms):
        game = self.game
        save_into(game, self._saved)  # the state payload, made in a buffer made once
        link = self.link
        if self._cuts_told:  # the serial link keeps the events' CRC as the history grows
            link.history_cuts = game.cuts
        link.send_state(self._state_view, now_ms, game.history)

    # -- host commands ----------------------------------------------------------------------

    def _command(self, cmd, now_ms):
        link = self.link
        seq = link.cmd_seq
        if (self.menu is not None or self.check is not None) and (
                cmd == _CMD_NEW_GAME or cmd == _CMD_UNDO or cmd == _CMD_RESTORE):
            # Someone at the table is in the setup menu or the wiring check: the game does
            # not change under their hands, and the buttons keep driving what they see.
            # The host hears why and may ask again once the board is back at the game.
            link.nack(seq, _ERR_BUSY)
            return
        if cmd == _CMD_NEW_GAME:
            settings = link.cmd_settings()
            try:
                self._new_game_from(settings)
            except (GameError, ValueError, KeyError):
                link.nack(seq, errors.BAD_SETTINGS)
                return
            if self.game.history.count and not self.game.finished and not link.replace:
                # Never silently: the players confirm on the board (ok), or the host says
                # REPLACE. Either way the game replaced is kept until it is logged.
                self.asked = (settings, seq)
                self.screens.draw_with(_draw_ask)
                link.nack(seq, _ERR_ASKED)
                return
            self.asked = None
            self.screens.draw_with(None)
            self.new_game(settings, now_ms)
            link.ack(seq)
        elif cmd == _CMD_UNDO:
            if self.undo(now_ms):
                link.ack(seq)
            else:
                link.nack(seq, errors.NOTHING_TO_UNDO)
        elif cmd == _CMD_STATE:
            link.ack(seq)
            App._send_state(self, now_ms)
        elif cmd == _CMD_PING:
            link.ack(seq)
        elif cmd == _CMD_EVENT:
            self._resend_event(seq, now_ms)
        elif cmd == _CMD_RESTORE:
            self._restore_event(seq, now_ms)
        elif cmd == _CMD_LOGGED:
            if self.kept is not None and link.cmd_game == self.kept_store.codec.game_id:
                self.kept = None
                self.kept_store.erase()
            link.ack(seq)
        else:
            link.nack(seq, errors.UNKNOWN_COMMAND)

    def _restore_event(self, seq, now_ms):
        """CMD_RESTORE: the host hands back an event this game lost (a journal cut at
        resume). Only the next event of the current game, in order; journaled and sent as
        if played. Anything else is refused and changes nothing."""
        link = self.link
        game = self.game
        if (link.cmd_game != self.numbering.game_id
                or link.cmd_index != game.history.count + 1):
            link.nack(seq, _ERR_REFUSED)
            return
        record = link.cmd_record
        try:
            game.apply(record)
        except GameError:
            link.nack(seq, _ERR_REFUSED)
            return
        App._record_event(self, game, record)
        link.ack(seq)
        link.send_event(link.cmd_index, record, 0, 0, 0, now_ms, resent=True)
        App._changed(self, now_ms, shot_event=False)

    def _resend_event(self, seq, now_ms):
        """CMD_EVENT: send event ``cmd_index`` of the current game again, by number."""
        link = self.link
        index = link.cmd_index
        if link.cmd_game == self.numbering.game_id:
            history = self.game.history
        elif self.kept is not None and link.cmd_game == self.kept_store.codec.game_id:
            history = self.kept.history
            kept = self.kept_store.codec
            link.game = kept.number  # the event goes out as the kept game's
            link.game_id[:] = kept.game_id
        else:
            history = None
        if history is None or not 0 < index <= history.count:
            link.nack(seq, _ERR_REFUSED)
        else:
            link.ack(seq)
            link.send_event(index, history.record(index - 1), 0, 0, 0, now_ms, resent=True)
        self._number_link()


def _draw_ask(buf, now_ms):
    # (a function of the module: the App class's dict stays within 47 slots, 376 bytes,
    # grown while the board's heap is at its most broken up; docs/performance.md)
    layout.text(buf, "nEW   ok")
