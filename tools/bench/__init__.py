"""`make bench` (`python -m tools.bench`): the board's figures on the 32-bit unix port, the network
link's and TLS's costs, and the club app's; the ESP32 conversion constants are in `esp32`.
"""
