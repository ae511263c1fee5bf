"""`python -m tools.club.screens [DIR]`: the old name of tools.testing.screens (the docs'
screenshots of the club app; the app itself never imports them)."""

import runpy

if __name__ == "__main__":
    runpy.run_module("tools.testing.screens", run_name="__main__", alter_sys=True)
