# The board's main.py: copied to its root by `make deploy`, or frozen by firmware/manifest.py.
# A frozen build runs its own packages, not copies an earlier deploy left on the flash
# ('' comes before '.frozen' in sys.path); it names them and leaves them alone (README).
import os
import sys

path = sys.path[:]
sys.path[:] = [entry for entry in path if entry not in ("", "/lib")]  # not the flash
names = ("rules_core", "boardlib", "firmware")
try:
    for name in names:
        __import__(name)
    for name in os.listdir():
        if name in names:
            print("main.py: /%s on the flash is not used: the firmware is frozen" % name)
except ImportError:  # not a frozen build: the packages on the flash
    for name in names:
        sys.modules.pop(name, None)
sys.path[:] = path
import firmware.run  # noqa: E402

firmware.run.start()
