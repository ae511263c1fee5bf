"""Support code that the tests, the bench and the docs share (never a product's import).

    from tools.testing.fakeboards import FakeBoard     # board-shaped frames on a pty
    from tools.testing.sample import play, fill        # games played by the rules
    from tools.testing.browser import Served, chromium # the app in a thread, a browser

Modules: fakeboards, sample, browser, screens (the docs' screenshots of the club app:
`python -m tools.testing.screens [DIR]`), clubbench and clubload (the club app's figures
of `make bench`: `python -m tools.testing.clubbench`, `python -m tools.testing.clubload`).
"""
