"""tools.sim.board.flash: the simulated board's flash as littlefs sees it (unix port only,
through tests/device/flash_cases.py)."""

import os

from helpers import device_case_tests, device_value


def run_image(path, step):
    return device_value("micropython", "flash_cases", "image_game", path, step)


def test_image_file_keeps_the_game_between_runs(tmp_path):
    path = str(tmp_path / "flash.img")
    first = run_image(path, 2)
    assert first["formatted"] is True
    assert first["status"] == 1  # nothing stored yet
    assert os.path.getsize(path) == 64 * 4096
    second = run_image(path, 2)  # a reboot: same image, the game goes on
    assert second["formatted"] is False
    assert second["status"] == 0
    from rules_core import Game
    g = Game("ceb", distance=(60, 60), sets=3, first=2)
    for pins in (1, 4, 1, 4):
        g.shot(pins=pins)
    assert second["state"] == g.state_json()


test_block_devices = device_case_tests("flash_cases", interpreters=("micropython",))


def test_image_of_the_wrong_size_is_refused(tmp_path):
    path = tmp_path / "flash.img"
    path.write_bytes(b"\xff" * 4096 * 3)
    message = device_value("micropython", "flash_cases", "wrong_size_message", str(path))
    assert "expected 262144" in message
    assert path.read_bytes() == b"\xff" * 4096 * 3  # left as it was
