"""The ESP32 twin's device side: what the ESP32 port of MicroPython does, on the unix port.

`rom.py` boots the board as ports/esp32/main.c does and runs the REPL as
shared/runtime/pyexec.c does; `machine`, `esptime`, `espselect` and `espsys` stand in
for the port's modules; `hardware` is the wiring (fake pins, display chip emulators).
`tools.sim.board.twin` (CPython) is the host side: the USB-serial pty, resets, watchdog.
docs/esp32.md says what is modelled and from which source file.
"""
