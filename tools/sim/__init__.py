"""The simulated table: the CPython front end (`python -m tools.sim`, `front`), its terminal
view (`view`) and timelines (`timelines`), and in `board/` the board itself and the ESP32
twin, which run on the MicroPython unix port (their programs are named in
tools.port.upy.ENTRIES). Nothing here is imported by the board, the logger or the club app.
"""
