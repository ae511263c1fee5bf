"""The host logger in a thread of the web app's process, and the commands it takes from it.

    bridge = LoggerBridge(logger, on_commit=hub.notify)
    bridge.start()                                   # logger.run() in a daemon thread
    bridge.new_game("73696d", ("ddbu", (40, 40), 1, 1, 0), replace=False)  # True: queued
    bridge.stop()

The web side never touches a port: a command is queued and the logger's own thread sends
it between two reads (tools.logger's `tick`), so frame numbering stays the logger's alone.
After every step in which the logger committed a newer board state, ``on_commit`` is
called (the live pages' hub then reads the database and pushes the change).
"""

import queue
import threading

from tools.logger import frames


class LoggerBridge:
    def __init__(self, logger, on_commit=None):
        self.logger = logger
        self.on_commit = on_commit
        self.commands = queue.Queue()
        self.sent = []  # (board, settings, replace) handed to a port, most recent last
        self._seen = None
        self.thread = threading.Thread(target=self._run, name="club-logger", daemon=True)

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

    def new_game(self, board, settings, replace=False):
        """Queue a new game for ``board`` (its key); False if no such board is connected."""
        if self._port(board) is None:
            return False
        self.commands.put((board, tuple(settings), bool(replace)))
        return True

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
                board, settings, replace = self.commands.get_nowait()
            except queue.Empty:
                break
            port = self._port(board)
            if port is None:
                continue
            rules, distance, sets, first, teams = settings
            lg.send(port, frames.CMD_NEW_GAME, frames.new_game_args(
                rules, distance, sets, first, replace, teams))
            self.sent.append((board, settings, replace))
        if lg.last_state is not self._seen:
            self._seen = lg.last_state
            if self.on_commit is not None:
                self.on_commit()
