# The board's main.py: copied to its root by `make deploy`, or frozen by firmware/manifest.py.
# A frozen build runs its own packages, not copies left on the flash (firmware/frozen.py).
import os
import sys

HOLD_FILE = "/deploy.hold"  # tools/board/deploy.py: written while it works on the board


def held():
    """True while `make deploy` holds the firmware: it resets the board to work on it with
    no watchdog running, and a frozen main.py cannot be renamed away as a copied one is."""
    try:
        os.stat(HOLD_FILE)
    except OSError:
        return False
    print("main.py: %s: deploy holds the firmware; run the deploy again (or remove %s)"
          % (HOLD_FILE, HOLD_FILE))
    return True


if not held():
    path = sys.path[:]
    sys.path[:] = [entry for entry in path if entry not in ("", "/lib")]  # not the flash
    try:
        import firmware.frozen  # noqa: F401  only a frozen build finds it here
    except ImportError:  # not a frozen build: the packages on the flash
        sys.modules.pop("firmware", None)
    sys.path[:] = path
    import firmware.run

    firmware.run.start()
