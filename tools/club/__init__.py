"""The club scoreboard: the host logger and a web app over the same SQLite database.

    python -m tools.club --db games.db --port /dev/ttyUSB1 --pin 4711
    python -m tools.club --db games.db --demo 4         # four simulated tables playing

Modules: app (the Starlette app), live (the live tables and server-sent events), security
(the club PIN, CSRF, refusals), logbridge (the logger in a thread, its commands), demo
(simulated tables), pages/store/chart (results, players, names), fakeboards (board-shaped
frames on ptys), serving (the app in a thread, headless Chromium), bench and loadbench
(`make bench`'s figures), sample (games for tests and benches), screens (the docs'
screenshots). docs/club.md describes it.
"""
