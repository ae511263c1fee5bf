"""The twin's `sys`: the unix port's, reporting the MicroPython version the twin plays.

`sys.implementation._mpy` is what `make deploy` reads to pick .mpy files the board can
load: the .mpy version (6) | sub-version << 8 | architecture (xtensawin, 10) << 10. The
sub-version of native code is 1 on MicroPython 1.20-1.22, 2 on 1.23, 3 from 1.24
(py/persistentcode.h, MPY_SUB_VERSION); 1.19 had .mpy 6.0 and 1.12-1.18 had 5.
"""

import sys as _real

XTENSAWIN = 10


def mpy_of(version):
    major, minor = version[0], version[1]
    if (major, minor) < (1, 19):
        return 5 | XTENSAWIN << 10
    sub = 0 if minor == 19 else 1 if minor <= 22 else 2 if minor == 23 else 3
    return 6 | sub << 8 | XTENSAWIN << 10


class _Implementation:
    def __init__(self, version):
        self.name = "micropython"
        self.version = version
        self._machine = "Generic ESP32 module with ESP32"
        self._mpy = mpy_of(version)

    def __repr__(self):
        return "(name='micropython', version=%r, _machine=%r, _mpy=%d)" % (
            self.version, self._machine, self._mpy)


class Sys:
    def __init__(self, version):
        self.implementation = _Implementation(version)
        self.platform = "esp32"
        self.version = "3.4.0; MicroPython v%d.%d.%d" % version[:3]

    def __getattr__(self, name):
        return getattr(_real, name)
