"""The host logger in a thread of another program's process (the club app's), and the
commands it takes from that program's other threads.

    bridge = LoggerBridge(logger, on_commit=hub.notify)
    bridge.start()                                   # logger.run() in a daemon thread
    bridge.cannot_command("73696d")                  # None, or why no command can reach it
    outcome = bridge.new_game("73696d", ("ddbu", (40, 40), 1, 1, 0), replace=False)
    outcome.sent, outcome.why, outcome.answer        # what really happened (Outcome)
    bridge.stop()

The other threads never touch a port: a command is queued and the logger's own thread sends
it between two reads (tools.logger's `tick`), so frame numbering stays the logger's alone.
new_game() waits for that thread to have written it to the board's serial port, or
published it signed on the broker, and then briefly for the board's answer: it never
reports as sent what was not. After every step in which the logger committed a newer board
state, ``on_commit`` is called (the club's live hub then reads the database and pushes the
change).
"""

import queue
import threading
import time

from tools.logger import frames

SEND_WAIT_S = 3.0  # for the logger's thread to send a command (it steps every 50 ms)
ANSWER_WAIT_S = 2.0  # for the board's ACK or ERROR


class Outcome:
    """What became of one command: ``sent`` (written to the port or published signed),
    else ``why`` not; ``answer``: ("ack", command kind) or ("error", code) once the board
    answered within ANSWER_WAIT_S, else None."""

    def __init__(self, board, settings, replace):
        self.board, self.settings, self.replace = board, settings, replace
        self.sent = False
        self.why = None
        self.seq = None
        self.port = None
        self.answer = None
        self.done = threading.Event()


def no_signing_reason(source, board_id):
    """Why the logger's MQTT source cannot sign a command for ``board_id`` now, or None."""
    if "+" in source.prefix:
        return ("this app listens to a federation's central broker (--mqtt-prefix with +): "
                "it sends no commands")
    if board_id not in source.keys:
        return ("this app has no command key for board %s, so it cannot sign commands for "
                "it: start it with --keys FILE naming the board" % board_id)
    if source.nonce(board_id) is None:
        return ("board %s has not said it is online since this app started: a signed "
                "command needs its nonce" % board_id)
    if not source.connected:
        return "the MQTT broker is not connected now"
    return None


class LoggerBridge:
    def __init__(self, logger, on_commit=None):
        self.logger = logger
        self.on_commit = on_commit
        self.commands = queue.Queue()
        self.sent = []  # (board, settings, replace) handed to a port, most recent last
        self._seen = None
        self.thread = threading.Thread(target=self._run, name="logger", daemon=True)

    def start(self):
        self.thread.start()
        return self

    def stop(self, timeout=10.0):
        self.logger.stop()
        if self.thread.is_alive():
            self.thread.join(timeout)
        self.logger.close()

    def connected(self, board):
        return self._port(board) is not None

    def cannot_command(self, board):
        """None when a command can be sent to ``board`` (its key) now, else why not."""
        port = self._port(board)
        if port is None:
            return "board %s is not connected to this app's logger now" % board
        mqtt = self.logger.mqtt
        if mqtt is not None and port.path.startswith("mqtt:") and port in (
                mqtt.boards.values()):
            return no_signing_reason(mqtt, port.path[len("mqtt:"):])
        return None

    def new_game(self, board, settings, replace=False, send_wait_s=SEND_WAIT_S,
                 answer_wait_s=ANSWER_WAIT_S):
        """Hand a new game for ``board`` (its key) to the logger's thread and wait for what
        became of it (an Outcome; blocks up to send_wait_s + answer_wait_s)."""
        outcome = Outcome(board, tuple(settings), bool(replace))
        outcome.why = self.cannot_command(board)
        if outcome.why is not None:
            return outcome
        self.commands.put(outcome)
        if not outcome.done.wait(send_wait_s):
            outcome.why = "the logger did not get to send it within %g s" % send_wait_s
            return outcome
        if outcome.sent:
            deadline = time.monotonic() + answer_wait_s
            while outcome.answer is None and time.monotonic() < deadline:
                time.sleep(0.02)
                outcome.answer = self._answer(outcome.port, outcome.seq)
        return outcome

    @staticmethod
    def _answer(port, seq):
        for kind, fields in list(port.answers):
            if fields.get("ref") == seq:
                if kind == frames.ACK:
                    return ("ack", fields.get("command"))
                return ("error", fields.get("code"))
        return None

    def _port(self, board):
        for port in self.logger._all_ports():
            if port.board_key == board and port.serial is not None:
                return port
        return None

    def _run(self):
        self.logger.run(tick=self._tick)

    def _tick(self, lg):
        while True:
            try:
                outcome = self.commands.get_nowait()
            except queue.Empty:
                break
            try:
                self._send(lg, outcome)
            finally:
                outcome.done.set()
        if lg.last_state is not self._seen:
            self._seen = lg.last_state
            if self.on_commit is not None:
                self.on_commit()

    def _send(self, lg, outcome):
        """Send ``outcome``'s command from the logger's thread; say whether it went out."""
        outcome.why = self.cannot_command(outcome.board)
        if outcome.why is not None:
            return
        port = self._port(outcome.board)
        mqtt = lg.mqtt
        unsigned = None if mqtt is None else mqtt.unsent
        rules, distance, sets, first, teams = outcome.settings
        seq = lg.send(port, frames.CMD_NEW_GAME, frames.new_game_args(
            rules, distance, sets, first, outcome.replace, teams))
        if port.serial is None:
            outcome.why = "the board's port failed as the command was written"
        elif mqtt is not None and mqtt.unsent != unsigned:
            outcome.why = "the command could not be signed for this board"
        else:
            outcome.sent, outcome.seq, outcome.port = True, seq, port
            self.sent.append((outcome.board, outcome.settings, outcome.replace))

