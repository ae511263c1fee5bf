"""tools/sim/board/frozenrom.py: the modules a stock ESP32 build freezes (umqtt), compiled
as the port's build compiles them, for the twin that plays the board's heap: in a ROMFS
image (a port with VfsRom), or as `.mpy` files (a port without it, which loads their
bytecode into the heap). Each is made again only when the sources change."""

import os

from tools.sim.board import frozenrom


def _sources(tmp_path):
    folder = tmp_path / "port"
    (folder / "umqtt").mkdir(parents=True)
    (folder / "umqtt" / "simple.py").write_text("def connect():\n    return 1\n")
    return folder


def test_the_compiled_tree_holds_each_module_as_mpy_and_follows_its_sources(tmp_path):
    folder = _sources(tmp_path)
    tree = str(tmp_path / "port-mpy")
    assert frozenrom.compiled_tree(str(folder), tree) == tree
    mpy = os.path.join(tree, "umqtt", "simple.mpy")
    with open(mpy, "rb") as f:
        first = f.read()
    assert first[:1] == b"M" and not os.path.exists(os.path.join(tree, "umqtt", "simple.py"))
    os.utime(mpy, (0, 0))
    frozenrom.compiled_tree(str(folder), tree)  # the same sources: kept as it was
    assert os.stat(mpy).st_mtime == 0
    (folder / "umqtt" / "simple.py").write_text("def connect():\n    return 2\n")
    frozenrom.compiled_tree(str(folder), tree)  # changed: made again
    with open(mpy, "rb") as f:
        assert f.read() != first


def test_the_image_holds_the_same_modules(tmp_path):
    folder = _sources(tmp_path)
    image = frozenrom.compiled_image(str(folder), str(tmp_path / "port.romfs"))
    with open(image, "rb") as f:
        data = f.read()
    assert b"simple.mpy" in data and b"umqtt" in data
