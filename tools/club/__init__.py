"""The club scoreboard: a web app over the logger's SQLite database (tools.records).

    python -m tools.club --db games.db --port /dev/ttyUSB1 --pin 4711
    python -m tools.club --db games.db --demo 4         # four simulated tables playing

Modules: app (the Starlette app), routes (the one route table and its rules), pages (every
page), live (the live tables and server-sent events), security (the club PIN, CSRF,
refusals, the Host header), serving (uvicorn with the club's limits), chart (a game's
chart), demo (simulated tables), __main__ (the command: the logger and the app in one
process). bench, loadbench and screens are the old names of tools/testing's club benches
and screenshots. docs/club.md describes it.
"""
