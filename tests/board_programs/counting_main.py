"""A main.py for the ESP32 twin (tests/test_twin.py): says that it runs, then counts
forever, so that a test can interrupt it and read `n` from the REPL."""

import time

import machine

print("main.py runs, cause", machine.reset_cause())
n = 0
while True:
    n += 1
    time.sleep_ms(50)
