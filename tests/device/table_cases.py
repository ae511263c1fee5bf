"""A table without a referee (tests/test_table.py): raw input timelines through the real
firmware on the simulated board, and what a person there would see and hear.

MicroPython only: the simulated board keeps its flash on littlefs. `table_run` plays a
timeline (CONTRACT.md section 4, tools.sim.board.timeline) in the firmware's 5 ms steps and
returns every distinct picture of the display (decoded from the emulated chips, with the
board time it went up), the final board state, and the tones of the buzzer as the emulated
PWM recorded them.
"""

import json

from firmware.app import App
from firmware.run import STEP_MS, tick
from tools.sim.board import timeline
from tools.sim.board.board import FLASH_MOUNT, build

DISPLAY_MS = 40  # how often the pictures are read (a person sees no faster change)


def _fresh(state, config, clock):
    import os

    try:
        os.umount(FLASH_MOUNT)
    except OSError:
        pass
    return build(state_dir=state, config=None if config is None else config.encode(),
                 clock=clock)


def table_run(state, settings, text, tail_ms=6000, config=None):
    """Play timeline `text` on a new game of `settings` (a dict as the menu makes;
    None: the board's default game). `config`: board.cfg text. Returns the pictures
    [[ms, text], ...], the final state, the last event record (hex) and the tones."""
    now = [0]
    sim = _fresh(state, config, lambda: now[0])
    app = App(sim.board)
    app.load()
    if settings is not None:
        app.new_game(settings, 0)
    app.start(0)
    levels = timeline.Levels(timeline.parse(text))
    end = levels.end_ms + tail_ms
    pictures = []
    last = None
    t = 0
    while t <= end:
        now[0] = t
        sim.set_levels(*levels.at(t))
        tick(app, t)
        if t % DISPLAY_MS == 0:
            shown = sim.visible()
            if shown != last:
                pictures.append([t, shown])
                last = shown
        t += STEP_MS
    history = app.game.history.tobytes()
    return {
        "pictures": pictures,
        "state": json.loads(app.game.state_json()),
        "records": [bytes(history[i:i + 4]).hex() for i in range(0, len(history), 4)],
        "tones": sim.tones(),
        "heard": sim.heard(),
        "menu": app.menu is not None,
        "config": _stored_config(),
    }


def _stored_config():
    from boardlib.config import read_stored

    try:
        return read_stored(FLASH_MOUNT + "/board.cfg")[0]
    except OSError:
        return None
