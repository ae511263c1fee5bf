"""`python -m tools.club.bench`, as `make bench` runs it: the old name of
tools.testing.clubbench (the club app's live figure lives with the other support code; the
app itself never imports it)."""

import runpy

if __name__ == "__main__":
    runpy.run_module("tools.testing.clubbench", run_name="__main__", alter_sys=True)
