"""What a frozen build does first at power-up; main.py imports this only from the frozen
modules (with the flash taken off sys.path), so only a frozen build runs it.

The ESP32 looks in the flash before '.frozen' (sys.path is '', '.frozen', '/lib'): copies
of the packages that an earlier deploy left there would run instead of the build. Imported
here, from the build, the packages stay the build's for good (their modules come from
their own folder), and each copy on the flash is named on the REPL (README).
"""

import os

import boardlib  # noqa: F401  the build's, as main.py took the flash off sys.path
import rules_core  # noqa: F401

PACKAGES = ("rules_core", "boardlib", "firmware")

for name in os.listdir():
    if name in PACKAGES:
        print("main.py: /%s on the flash is not used: the firmware is frozen" % name)
