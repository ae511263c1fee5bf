"""The scoreboard application: inputs -> shots -> rules -> journal -> display and link.

    from firmware.app import App
    app = App(board)              # board: a profile built by firmware.hw or tools.simboard
    app.boot(now_ms)              # resume the game from flash, say hello on the link
    while True:
        app.poll_inputs(now_ms)   # every few ms: sensors, buttons, shots, rules, journal
        app.refresh_display(now_ms)
        app.service_link(now_ms)
        app.upkeep(now_ms)        # compact the journal while no shot is in progress

Every step takes the time as an argument, so the same code runs from asyncio tasks on the
board (`firmware.run`) and in virtual time in the simulator. Order of work for a scored shot:
the rules apply it, the journal stores it (flushed), then the display and the link show it:
what a player has seen on the display is on flash.
"""

import struct

from boardlib import inputs, layout, shot
from boardlib.display import Display
from boardlib.journal import GameStore
from boardlib.link import ERR_ASKED, ERR_BUSY, ERR_REFUSED, ERR_STORAGE, PROTOCOL_VERSION
from boardlib.ticks import ticks_add, ticks_diff
from firmware import errors
from firmware.screens import ERR, Screens
from rules_core import Game, GameError, snapshot

try:
    from micropython import const
except ImportError:  # CPython: the integer itself
    const = int


STORAGE_RETRY_MS = const(5000)  # how often a failing flash is tried again between shots
_ENOSPC = const(28)
_BUTTONS = const(4)  # len(shot.BUTTON_NAMES)


class App:
    def __init__(self, board):
        self.board = board
        self.config = cfg = board.config
        config_error = board.config_error
        self.sensors = inputs.SpotSensors(
            glitch_ms=cfg["glitch_ms"], stuck_ms=cfg["stuck_ms"]
        )
        self.buttons = [
            inputs.Button(debounce_ms=cfg["debounce_ms"], hold_ms=cfg["hold_ms"])
            for _ in range(_BUTTONS)
        ]
        self.assembler = shot.ShotAssembler(settle_ms=cfg["settle_ms"])
        self.display = board.display if board.display is not None else Display.none()
        self.display.brightness(cfg["brightness"])
        self.screens = Screens(self.display)
        self.numbering = GameNumbering()
        self.store = GameStore(board.data_dir, codec=self.numbering)
        # The last game replaced while it had events, until the host says it has it all
        # (CMD_LOGGED): a new game never takes a game away before it is logged.
        self.kept_numbering = GameNumbering()
        self.kept_store = GameStore(board.data_dir.rstrip("/") + "-kept",
                                    codec=self.kept_numbering)
        self.kept = None
        self.asked = None  # new-game settings from the host, waiting for the players' ok
        self.link = board.link
        self._net = board.net
        self.game = None
        self.state = None
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
        self._buttons_busy = 0

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
        """Read the stored game from flash; nothing is shown or sent yet."""
        game, status = self.store.load()
        if status == GameStore.TRUNCATED:
            self.notices.append(errors.JOURNAL_CUT)
        elif status == GameStore.CORRUPT:
            self.notices.append(errors.JOURNAL_LOST)
        self.stored = game is not None  # a game (finished or not) was on flash
        if game is None:
            game = self._new_game_from(self.config["game"])
            self.numbering.new_identity()
            self._store(self.store.new_game, game)
        self.game = game
        self.state = game.state()
        self.kept, _ = self.kept_store.load()

    def start(self, now_ms):
        """Say hello on the link, send the state, put the scores on the display."""
        self._started = True
        self._number_link()
        if self.link is not None:
            self.link.send_hello(PROTOCOL_VERSION, self.board.reset_cause, now_ms)
        self._changed(now_ms, shot_event=False)  # the state goes out after the hello
        self.screens.show_reset(self.board.reset_cause, now_ms)
        for code in self.notices:
            self.screens.flash(ERR, code, now_ms)
            if self.link is not None and errors.is_storage(code):
                # the host hears of a game resumed short (or lost) with the board's code
                self.link.send_error(ERR_STORAGE, "Err %d" % code)
        if self.storage_error:
            self._storage_changed()

    def _new_game_from(self, settings):
        d = settings["distance"]
        return Game(
            settings["rules"],
            distance=(d[0], d[1]),
            sets=settings.get("sets", 1),
            first=settings.get("first", 1),
            teams=settings.get("teams", 0),
        )

    # -- the steps --------------------------------------------------------------------------

    def poll_inputs(self, now_ms):
        # Kept to a few locals: MicroPython takes a bigger frame from the heap on every
        # call, and this runs every 5 ms. The rare work is in the helpers below.
        if self.check is not None:  # the builders' wiring check (firmware.check)
            return self.check.run(self, now_ms)
        inputs = self.board.read_inputs()  # spots in bits 0-4, buttons from bit 8
        down = self.sensors.update(inputs, now_ms)  # it takes the spots' bits alone
        if self.sensors.fault != self._faults:
            self._faults_changed()
        assembler = self.assembler  # each attribute lookup costs: the idle poll has few
        if down != self._down or assembler.busy:  # it only cares about changes
            self._down = down
            assembler.spots(down, now_ms, self.sensors.flapping)
        pressed = inputs >> 8
        if pressed or self._buttons_busy:  # all released and settled: nothing to time
            self._poll_buttons(pressed, now_ms)
        if assembler.busy or assembler.waiting:
            self._take(assembler.poll(now_ms), now_ms)

    def _faults_changed(self):
        faults = self.sensors.fault
        self._faults = faults
        self._show_fault()

    def _show_fault(self):
        # a sensor fault first (the players can fix it), else a storage error
        code = errors.sensor_code(self.sensors) if self._faults else 0
        self.screens.fault_code = code or self.storage_error

    def _poll_buttons(self, pressed, now_ms):
        busy = 0
        buttons = self.buttons
        for i in range(_BUTTONS):
            button = buttons[i]
            level = pressed & (1 << i)
            if not level and button.idle:
                continue  # released and settled: nothing to time (the usual button)
            kind = button.update(level, now_ms)
            if kind:
                self._button(i, kind, now_ms)
            if not button.idle:
                busy = 1
        self._buttons_busy = busy or pressed

    def _take(self, event, now_ms):
        if self.asked is not None and event:
            self._answer_ask(False, now_ms)  # play went on: the players said no
        if event == shot.SHOT:
            self._scored_shot(now_ms)
        elif event == shot.UNDO:
            self.undo(now_ms)
        elif event == shot.MENU:
            self._open_menu(now_ms)

    def _button(self, which, kind, now_ms):
        if self.asked is not None:
            # The host asked for a new game over an unfinished one: ok confirms it, any
            # other button keeps the game.
            self._answer_ask(which == shot.OK and kind == inputs.PRESS, now_ms)
            return
        if self.menu is not None:
            settings = self.menu.button(which, kind)
            if settings is not None:
                self.new_game(settings, now_ms)
            if self.menu.closed:
                check = self.menu.check
                self.menu = None
                self.screens.override = None
                if check:
                    from firmware.check import WiringCheck

                    self.check = WiringCheck(self.board, now_ms, self.config["hold_ms"])
                    self.screens.override = self.check.draw
            return
        self.assembler.button(which, kind, now_ms)

    def _open_menu(self, now_ms):
        # Imported here, not at the top: a board loads the setup menu only when a player
        # opens it (the bench counts it apart, docs/performance.md).
        from firmware.menu import Menu

        st = self.state
        self.menu = Menu(
            {
                "rules": st["rules"],
                "distance": st["distance"],
                "sets": st.get("best_of", 1),
                "first": st.get("first", 1),
                "teams": 0 if st["members"] is None else 1,
            }
        )
        self.screens.override = self._draw_menu
        self.assembler.reset()

    def _draw_menu(self, buf, now_ms):
        self.menu.draw(buf)

    def refresh_display(self, now_ms):
        self.screens.refresh(self.state, now_ms)

    def service_link(self, now_ms):
        link = self.link
        if link is None:
            return
        cmd = link.poll(now_ms)
        if cmd:
            self._command(cmd, now_ms)
        net = self._net
        if net is not None and net.notice:  # the network failed: say why, once per try
            self.screens.flash(ERR, net.take_notice(), now_ms)

    def upkeep(self, now_ms):
        if self.assembler.busy:
            return
        if not self.storage_error:
            self.store.maintain()
        elif ticks_diff(now_ms, self._storage_retry_at) >= 0:
            # a failing or full flash is tried again now and then: a whole snapshot of
            # the game, so that nothing is missing once it works
            self._storage_retry_at = ticks_add(now_ms, STORAGE_RETRY_MS)
            self._store(self.store.maintain)

    # -- storage ----------------------------------------------------------------------------

    def _store(self, action, *args):
        """Run a store write; a flash failure becomes a storage error on the display and
        the link (the game goes on in memory), and a write that works clears it."""
        try:
            action(*args)
        except OSError as exc:
            code = errors.STORAGE_FULL if exc.args and exc.args[0] == _ENOSPC else (
                errors.STORAGE_FAILED)
            if code != self.storage_error:
                self.storage_error = code
                self._storage_changed()
            return False
        if self.storage_error and not self.store.needs_snapshot:
            self.storage_error = 0
            self._storage_changed()
        return True

    def _storage_changed(self):
        self._show_fault()
        if self._started and self.link is not None and self.storage_error:
            self.link.send_error(ERR_STORAGE, "Err %d" % self.storage_error)

    # -- game events ------------------------------------------------------------------------

    def _scored_shot(self, now_ms):
        game = self.game
        if game.finished:
            return  # a finished game takes only undo or a new game
        pins, carom, fouls = self.assembler.shot_for(game.rules)
        try:
            record = game.shot(pins, carom, fouls)
        except GameError:
            return
        self._store(self.store.record, game, record)
        if self.link is not None and self._started:
            # The event first, then the state that counts it: a host that has the state
            # has had its chance at every event in it.
            self.link.send_event(len(game.history) // 4, record, game.last_player,
                                 game.last_points, game.last_to, now_ms)
        self._changed(now_ms)

    def undo(self, now_ms):
        try:
            self.game.undo()
        except GameError:
            self.screens.flash(ERR, errors.NOTHING_TO_UNDO, now_ms)
            return False
        self._store(self.store.record_undo, self.game)
        if self.link is not None and self._started:
            self.link.send_undo(len(self.game.history) // 4, now_ms)
        self._changed(now_ms, shot_event=False)
        return True

    def new_game(self, settings, now_ms):
        game = self._new_game_from(settings)  # raises GameError on bad settings
        if self.game is not None and self.game.history:
            self._keep(self.game)
        self.game = game
        self.numbering.number = (self.numbering.number + 1) & 0xFFFF
        self.numbering.new_identity()
        self._number_link()
        self._store(self.store.new_game, game)
        self.assembler.reset()
        self._changed(now_ms, shot_event=False)

    def _keep(self, game):
        """Keep ``game`` on flash (and in memory) until the host has logged it."""
        self.kept_numbering.number = self.numbering.number
        self.kept_numbering.game_id[:] = self.numbering.game_id
        try:
            self.kept_store.new_game(game)
        except OSError:  # a full flash loses the spare copy, never the game being played
            pass
        self.kept = game

    def _drop_kept(self):
        self.kept = None
        self.kept_store.erase()

    def _draw_ask(self, buf, now_ms):
        layout.text(buf, "nEW   ok")

    def _answer_ask(self, yes, now_ms):
        settings = self.asked
        self.asked = None
        self.screens.override = None
        if yes:
            self.new_game(settings, now_ms)  # checked when the command came
        else:
            self.link.send_error(ERR_REFUSED, "", self.asked_seq)
            self._changed(now_ms, shot_event=False)

    def _number_link(self):
        if self.link is not None:
            self.link.game = self.numbering.number
            self.link.game_id[:] = self.numbering.game_id

    def _changed(self, now_ms, shot_event=True):
        self.state = self.game.state()
        if not self._started:
            return
        if shot_event:
            self.screens.after_event(self.state, now_ms, self.game.announce)
        else:
            self.screens.clear()
            self.screens.after_event(self.state, now_ms, self.game.announce)
            self.screens.clear()
        if self.link is not None:
            self._send_state(now_ms)

    def _send_state(self, now_ms):
        self.link.send_state(snapshot.pack_state(self.game), now_ms, self.game.history)

    # -- host commands ----------------------------------------------------------------------

    def _command(self, cmd, now_ms):
        link = self.link
        seq = link.cmd_seq
        if (self.menu is not None or self.check is not None) and (
                cmd == link.CMD_NEW_GAME or cmd == link.CMD_UNDO or cmd == link.CMD_RESTORE):
            # Someone at the table is in the setup menu or the wiring check: the game does
            # not change under their hands, and the buttons keep driving what they see.
            # The host hears why and may ask again once the board is back at the game.
            link.nack(seq, ERR_BUSY)
            return
        if cmd == link.CMD_NEW_GAME:
            settings = link.cmd_settings()
            try:
                self._new_game_from(settings)
            except (GameError, ValueError, KeyError):
                link.nack(seq, errors.BAD_SETTINGS)
                return
            if self.game.history and not self.game.finished and not link.replace:
                # Never silently: the players confirm on the board (ok), or the host says
                # REPLACE. Either way the game replaced is kept until it is logged.
                self.asked = settings
                self.asked_seq = seq
                self.screens.override = self._draw_ask
                link.nack(seq, ERR_ASKED)
                return
            self.asked = None
            self.screens.override = None
            self.new_game(settings, now_ms)
            link.ack(seq)
        elif cmd == link.CMD_UNDO:
            if self.undo(now_ms):
                link.ack(seq)
            else:
                link.nack(seq, errors.NOTHING_TO_UNDO)
        elif cmd == link.CMD_STATE:
            link.ack(seq)
            self._send_state(now_ms)
        elif cmd == link.CMD_PING:
            link.ack(seq)
        elif cmd == link.CMD_EVENT:
            self._resend_event(seq, now_ms)
        elif cmd == link.CMD_RESTORE:
            self._restore_event(seq, now_ms)
        elif cmd == link.CMD_LOGGED:
            if self.kept is not None and link.cmd_game == self.kept_numbering.game_id:
                self._drop_kept()
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
                or link.cmd_index != len(game.history) // 4 + 1):
            link.nack(seq, ERR_REFUSED)
            return
        record = link.cmd_record
        try:
            game.apply(record)
        except GameError:
            link.nack(seq, ERR_REFUSED)
            return
        self._store(self.store.record, game, record)
        link.ack(seq)
        link.send_event(link.cmd_index, record, 0, 0, 0, now_ms, resent=True)
        self._changed(now_ms, shot_event=False)

    def _resend_event(self, seq, now_ms):
        """CMD_EVENT: send event ``cmd_index`` of the current game again, by number."""
        link = self.link
        index = link.cmd_index
        if link.cmd_game == self.numbering.game_id:
            history = self.game.history
        elif self.kept is not None and link.cmd_game == self.kept_numbering.game_id:
            history = self.kept.history
            link.game = self.kept_numbering.number  # the event goes out as the kept game's
            link.game_id[:] = self.kept_numbering.game_id
        else:
            history = b""
        if not 0 < index <= len(history) // 4:
            link.nack(seq, ERR_REFUSED)
        else:
            link.ack(seq)
            at = (index - 1) * 4
            link.send_event(index, history[at:at + 4], 0, 0, 0, now_ms, resent=True)
        self._number_link()


class GameNumbering:
    """The stored-game codec: the game's identity and number in front of the snapshot.

    The identity is 8 random bytes made with the game (os.urandom), so no two games are
    ever taken for one, even when a re-flashed board numbers its games from 0 again; the
    number goes up by one for every new game, for people. Both travel in every game frame;
    keeping them in the snapshot means they survive a power cut with the game. Layout:
    b"ID", identity (8), number u16 LE, then rules_core.snapshot.pack(game). A game stored
    before identities (number u16, then the snapshot) gets a new identity when read."""

    def __init__(self):
        self.number = 0
        self.game_id = bytearray(8)

    def new_identity(self):
        import os

        self.game_id[:] = os.urandom(8)

    def parts(self, game):
        # in pieces, written one after the other: a long game needs no large block of heap
        return (b"ID", self.game_id, struct.pack("<H", self.number)) + snapshot.parts(game)

    def unpack(self, data):
        if len(data) < 2:
            raise ValueError("stored game too short")
        at = 12 if bytes(data[0:2]) == b"ID" else 2  # an old game (game number 0x4449 ...
        game = snapshot.unpack(memoryview(data)[at:])  # ... aside) has no identity yet
        self.number = struct.unpack_from("<H", data, at - 2)[0]
        if at == 2:
            self.new_identity()
        else:
            self.game_id[:] = data[2:10]
        return game
