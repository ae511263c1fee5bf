"""Two links as one, and what a command's answer goes through: the serial link and the
network link side by side (docs/network.md).

    from boardlib.linkpair import Both
    board.link = Both(serial_link, net_link)   # frames out on both, commands from either
    kind = board.link.poll(now_ms)             # a command, answered on the link it came on

`Answers` is the part of a link the application uses to read and answer a command; a class
that forwards it sets `_asked` to the `boardlib.link.Link` the command came from.
"""

from boardlib import link as _link


class Answers:
    """A command as the application reads and answers it, forwarded to the Link that
    received it (`_asked`): NetLink's own, or in Both the one the command came from."""

    _asked: _link.Link

    NONE = _link.NONE
    CMD_NEW_GAME = _link.CMD_NEW_GAME
    CMD_UNDO = _link.CMD_UNDO
    CMD_STATE = _link.CMD_STATE
    CMD_PING = _link.CMD_PING
    CMD_EVENT = _link.CMD_EVENT
    CMD_LOGGED = _link.CMD_LOGGED
    CMD_RESTORE = _link.CMD_RESTORE

    @property
    def cmd_seq(self):
        return self._asked.cmd_seq

    @property
    def cmd_game(self):
        return self._asked.cmd_game

    @property
    def cmd_index(self):
        return self._asked.cmd_index

    @property
    def cmd_record(self):
        return self._asked.cmd_record

    @property
    def replace(self):
        return self._asked.replace

    def cmd_settings(self):
        return self._asked.cmd_settings()

    def ack(self, cmd_seq):
        return self._asked.ack(cmd_seq)

    def nack(self, cmd_seq, code):
        return self._asked.nack(cmd_seq, code)


class Both(Answers):
    """The serial link and the network link as one: frames go out on both, commands come
    from either and are answered on the one they came from."""

    def __init__(self, first, second):
        self.links = (first, second)
        self._asked = first
        second.game_id = first.game_id  # one identity, filled in place, for both

    @property
    def game(self):
        return self.links[0].game

    @game.setter
    def game(self, number):
        for lk in self.links:
            lk.game = number

    @property
    def game_id(self):
        return self.links[0].game_id

    def send_hello(self, version, reset_cause, now_ms):
        for lk in self.links:
            lk.send_hello(version, reset_cause, now_ms)

    def send_state(self, payload, now_ms, history=b""):
        for lk in self.links:
            lk.send_state(payload, now_ms, history)

    def send_event(self, index, record, player, points, to, now_ms, resent=False):
        for lk in self.links:
            lk.send_event(index, record, player, points, to, now_ms, resent)

    def send_undo(self, history_len, now_ms):
        for lk in self.links:
            lk.send_undo(history_len, now_ms)

    def send_error(self, code, detail="", ref=_link.NO_REF):
        for lk in self.links:
            lk.send_error(code, detail, ref)

    def poll(self, now_ms):
        for lk in self.links:
            kind = lk.poll(now_ms)
            if kind:
                self._asked = lk
                return kind
        return _link.NONE
