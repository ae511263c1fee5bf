"""Device test modules: plain Python that runs on CPython and on MicroPython (see README)."""
