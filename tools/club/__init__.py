"""The club scoreboard: the host logger and a web app over the same SQLite database.

    python -m tools.club --db games.db --port /dev/ttyUSB1 --pin 4711
    python -m tools.club --db games.db --demo 4         # four simulated tables playing

Modules: app (the Starlette app), live (the live tables and server-sent events), security
(the club PIN, CSRF, refusals), logbridge (the logger in a thread, its commands), demo
(simulated tables), pages/store/chart (results, players, names). docs/club.md describes it.
"""
