"""Files into and out of a twin's flash image, without booting it (MicroPython unix port).

    micropython tools/sim/board/esp32/flashfs.py STATE_DIR put SRC_DIR   # copy a tree in
    micropython tools/sim/board/esp32/flashfs.py STATE_DIR cat PATH      # print a file
    micropython tools/sim/board/esp32/flashfs.py STATE_DIR ls [DIR]      # list a folder

What a builder's flash tool does before the board's first boot; tests use it to give a
twin its firmware and board.cfg quickly. Only `put` creates or formats an image (an erased
one); `ls` and `cat` fail on a missing or unmountable image rather than show it empty.
"""

import os
import sys

from tools.sim.board.flash import FileBlockDev, mount


def _copy_tree(src, dest):
    for name, kind, *_ in os.ilistdir(src):
        path = src + "/" + name
        target = dest + "/" + name
        if kind == 0x4000:
            try:
                os.mkdir(target)
            except OSError:
                pass
            _copy_tree(path, target)
        else:
            with open(path, "rb") as f, open(target, "wb") as g:
                g.write(f.read())


def main(argv):
    state, command = argv[0], argv[1]
    image = state + "/flash.img"
    if command != "put":
        # Reading never creates or formats an image: a missing or unmountable one is an
        # error here, not an empty listing.
        try:
            os.stat(image)
        except OSError:
            sys.stderr.write("flashfs: no flash image %s\n" % image)
            sys.exit(1)
        mount(FileBlockDev(image), "/flash", format_blank=False)
    else:
        try:
            os.mkdir(state)
        except OSError:
            pass
        mount(FileBlockDev(image), "/flash")
    if command == "put":
        _copy_tree(argv[2], "/flash")
    elif command == "cat":
        with open("/flash/" + argv[2]) as f:
            sys.stdout.write(f.read())
    elif command == "ls":
        print(" ".join(sorted(os.listdir("/flash/" + (argv[2] if len(argv) > 2 else "")))))
    os.umount("/flash")


main(sys.argv[1:])
