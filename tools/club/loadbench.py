"""`tools.club.loadbench`, as `make bench` imports it and `python -m` runs it: the old name
of tools.testing.clubload (the club's first-load bench; the app itself never imports it).
Imported, this name is that module."""

import importlib
import runpy
import sys

if __name__ == "__main__":
    runpy.run_module("tools.testing.clubload", run_name="__main__", alter_sys=True)
else:
    sys.modules[__name__] = importlib.import_module("tools.testing.clubload")
