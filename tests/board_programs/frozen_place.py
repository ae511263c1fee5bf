"""For `mpremote run` on the ESP32 twin (tests/test_frozen_twin.py): where the board looks
for modules, and whether it can write over its frozen build (errno 30: read-only)."""

import sys

print(sys.path)
try:
    open("/.frozen/main.py", "w")
except OSError as e:
    print("errno", e.errno)
