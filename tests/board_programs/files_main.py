"""A main.py for the ESP32 twin (tests/test_twin.py): the reset cause and the files on
the flash, at every boot."""

import os

import machine

print("cause", machine.reset_cause(), "files", sorted(os.listdir()))
