"""The application's buzzer: which call each event makes, and the on/off setting.

    from firmware import sound
    buzzer = sound.make(board)                      # boardlib.buzzer.Buzzer, or None: silent
    sound.after_shot(buzzer, game, now_ms)
    sound.switch(buzzer, on, board.config_path)     # the setup menu's bEEP on/off

Kept apart from firmware.app so that the loop's code stays small: the app calls these only
on events, and while `buzzer.busy` its step() wakes at `buzzer.due` (App._sound). A board
without a buzzer (board.buzzer None) never loads boardlib.buzzer.
"""

from boardlib import calls


def make(board):
    """A Buzzer on the board's PWM, on unless /board.cfg says `"buzzer": false`."""
    if board.buzzer is None:
        return None
    from boardlib.buzzer import Buzzer

    return Buzzer(board.buzzer, on=board.config.get("buzzer") is not False)


def after_shot(buzzer, game, now_ms):
    """Play the call of the shot `game` has just applied (boardlib.calls.for_event); the
    turn passed when the player at the table is not the one who shot."""
    buzzer.play(calls.for_event(game.announce, game.last_points, game.last_foul,
                                game.turn != game.last_player), now_ms)


def switch(buzzer, on, config_path):
    """Sound on or off from the setup menu, kept in /board.cfg (`buzzer`) so that it holds
    after a power cut. A file that is damaged, or cannot be written, is left as it is: the
    setting holds until the board restarts."""
    buzzer.on = on
    if not on:
        buzzer.stop()
    try:
        from boardlib.config import read_stored, save_config

        try:
            stored, damage = read_stored(config_path)
        except OSError:  # no file yet: the defaults, and this one key
            stored, damage = {}, ""
        if damage or stored.get("buzzer", True) == on:
            return
        stored["buzzer"] = on
        save_config(config_path, stored)
    except (OSError, ValueError, MemoryError):
        pass
