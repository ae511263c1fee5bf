# The board's main.py: copied to its root by `make deploy`, or frozen by firmware/manifest.py.
# A frozen build runs its own packages, not copies left on the flash (firmware/frozen.py).
import sys

path = sys.path[:]
sys.path[:] = [entry for entry in path if entry not in ("", "/lib")]  # not the flash
try:
    import firmware.frozen  # noqa: F401  only a frozen build finds it here
except ImportError:  # not a frozen build: the packages on the flash
    sys.modules.pop("firmware", None)
sys.path[:] = path
import firmware.run  # noqa: E402

firmware.run.start()
