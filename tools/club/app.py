"""The club's web app (Starlette): live pages, server-sent events, the club's pages.

    app = create_app("games.db", pin="4711", commands=bridge)   # an ASGI app for uvicorn

Pages: `/` every table (the club TV), `/table/BOARD` one table (a phone), `/overlay/BOARD`
a transparent strip for a stream, `/events` the server-sent events that keep them live,
`/api/tables` the same data as JSON, `/status.json` the refused writes counted. Results,
games and players come from tools/club/pages.py (its `routes()`); every template extends
base.html and is autoescaped. Writes (a new game on a board) go through
tools.club.security.require_write: the PIN and the form's token.
"""

import os

import jinja2
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.responses import JSONResponse, RedirectResponse, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates

from tools.club import security
from tools.club.live import LiveHub, board_label
from tools.club.serving import BodyLimit

HERE = os.path.dirname(os.path.abspath(__file__))
RULES_NAMES = {"ddbu": "DDBU keglebillard", "ceb": "CEB five-pins",
               "russian": "Russian kegel billiards"}
NEW_GAME_RULES = ("ddbu", "ceb", "russian")
FORM_MAX_BYTES = 16384  # the largest form is a few hundred bytes


def make_templates():
    """Jinja2 with autoescape on for every template, whatever its file name."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(os.path.join(HERE, "templates")),
        autoescape=True, trim_blocks=True, lstrip_blocks=True)
    env.globals["csrf_input"] = security.csrf_input
    env.globals["rules_names"] = RULES_NAMES
    env.filters["board_label"] = board_label  # T01 rather than 543031, where it reads so
    return Jinja2Templates(env=env)


def create_app(db_path, pin=None, commands=None, hub=None, poll_s=None, allowed_hosts=(),
               limits=None):
    """The Starlette app over the logger database ``db_path``. ``commands``: something with
    ``new_game(board, settings, replace)`` that hands a command to the logger (None: the
    logger is not in this process and boards cannot be told anything). ``hub``: a LiveHub
    to share (made here when None). ``allowed_hosts``: names the app answers to besides
    localhost and IP addresses (the Host header). ``limits``: the server's connection
    counts (tools.club.serving.Limits) for /status.json; app.state.limits."""
    from tools.club import pages
    from tools.club.serving import Limits

    templates = make_templates()
    hub = hub or (LiveHub(db_path) if poll_s is None else LiveHub(db_path, poll_s=poll_s))
    limits = limits or Limits()

    def render(request, name, status_code=200, headers=None, **context):
        context.setdefault("writable", guard.writable)
        context.setdefault("lockout", security.wait_text(guard.lockout(request))
                           if guard.lockout(request) > 0 else None)
        return templates.TemplateResponse(request, name, context, status_code=status_code,
                                          headers=headers)

    async def tables_page(request):
        return render(request, "tables.html", tables=hub.snapshot(), title="Tables")

    def _board_table(board):
        table = hub.current.get(board)
        if table is None:
            raise HTTPException(404, "no table called %r has been seen" % board)
        return table

    async def table_page(request):
        table = _board_table(request.path_params["board"])
        problem = (NO_LOGGER if commands is None
                   else commands.cannot_command(request.path_params["board"]))
        return render(request, "table.html", table=table, title="Table %s" % table["label"],
                      command_problem=problem, rules=NEW_GAME_RULES,
                      sent=sent_notes.take(request, request.query_params.get("sent")),
                      saved=request.query_params.get("saved"),
                      players=pages.club_store(request).players())

    async def overlay_page(request):
        table = _board_table(request.path_params["board"])
        return render(request, "overlay.html", table=table, title="Overlay")

    async def events(request):
        return StreamingResponse(hub.stream(), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache",
                                          "X-Accel-Buffering": "no"})

    async def api_tables(request):
        return JSONResponse({"tables": hub.snapshot()})

    async def status(request):
        return JSONResponse({"refusals": guard.refusals, "writable": guard.writable,
                             "clients": len(hub.clients), "tables": len(hub.current),
                             "pin": guard.limiter.status(), "connections": limits.status()})

    async def new_game(request):
        board = request.path_params["board"]
        form = await request.form()
        await security.require_write(request, form)
        _board_table(board)
        if commands is None:
            raise HTTPException(409, NO_LOGGER)
        try:
            settings = _new_game_settings(form)
        except ValueError as e:
            raise HTTPException(400, str(e)) from None
        outcome = await run_in_threadpool(commands.new_game, board, settings,
                                          bool(form.get("replace")))
        if not outcome.sent:
            raise HTTPException(409, "Nothing was sent to the board: %s." % outcome.why)
        note = sent_notes.keep(request, sent_text(outcome.answer))
        return RedirectResponse("/table/%s?sent=%s" % (board, note), status_code=303)

    async def refused(request, exc):
        headers = None if exc.retry_after is None else {"Retry-After": str(exc.retry_after)}
        return render(request, "refused.html", status_code=exc.status, message=exc.message,
                      title="Refused", headers=headers)

    async def http_error(request, exc):
        if request.url.path.startswith(("/events", "/api/")):
            return JSONResponse({"error": exc.detail}, status_code=exc.status_code)
        return render(request, "refused.html", status_code=exc.status_code,
                      message=exc.detail, title="Error %d" % exc.status_code)

    routes = [
        Route("/", tables_page, name="tables"),
        Route("/table/{board}", table_page, name="table"),
        Route("/table/{board}/new-game", new_game, methods=["POST"], name="new_game"),
        Route("/overlay/{board}", overlay_page, name="overlay"),
        Route("/events", events, name="events"),
        Route("/api/tables", api_tables, name="api_tables"),
        Route("/status.json", status, name="status"),
        *pages.routes(),
        Mount("/static", app=StaticFiles(directory=os.path.join(HERE, "static")),
              name="static"),
    ]

    async def lifespan(app):
        limits.watch_accept_errors()
        if guard.writable:  # the kept count of wrong PINs, read before the first page
            await run_in_threadpool(guard.limiter.locked_for, "")
        await hub.start()
        try:
            yield
        finally:
            await hub.stop()

    # Wrong PINs of every client together are kept in the database: a restart of the app
    # (the club PC switched off at night) does not give an attacker a fresh start.
    limiter = security.PinLimiter(
        load=lambda: pages.store_of(app.state).pin_tries(),
        save=lambda *tries: pages.store_of(app.state).keep_pin_tries(*tries))
    guard = security.Guard(pin, limiter)
    sent_notes = Notes()
    app = Starlette(routes=routes, lifespan=_lifespan(lifespan),
                    exception_handlers={security.Refused: refused, HTTPException: http_error})
    # the last added runs first: the Host header, then the body's size, then the session
    app.add_middleware(security.SessionCookie)
    app.add_middleware(BodyLimit, limit=FORM_MAX_BYTES, limits=limits)
    app.add_middleware(security.HostCheck, names=allowed_hosts, guard=guard)
    app.state.guard = guard
    app.state.limits = limits
    app.state.hub = hub
    app.state.db_path = db_path
    app.state.templates = templates
    app.state.render = render
    return app


NO_LOGGER = ("The logger does not run with this web app: boards cannot be told anything "
             "from here")


def sent_text(answer):
    """What the page says about a new game the logger did send: from the board's answer
    (None: none came within a couple of seconds)."""
    from boardlib.link import ERR_ASKED, ERR_BUSY

    if answer is None:
        return ("Sent to the board; it has not answered yet. Unless \"replace\" was ticked, "
                "the players confirm the new game with ok on the board.")
    kind, code = answer
    if kind == "ack":
        return "Sent to the board, which started the new game."
    if code == ERR_ASKED:
        return ("Sent to the board, which asks the players to confirm the new game: ok on "
                "the board starts it, any other button keeps the game being played.")
    if code == ERR_BUSY:
        return ("Sent to the board, which refused it: its setup menu or wiring check is "
                "open at the table. Nothing changed; try again once the players have left "
                "it.")
    return "Sent to the board, which refused it (error %s). Nothing changed." % code


class Notes:
    """Messages for a page after a redirect, each for the browser session that caused it
    and shown once: a link someone makes up (?sent=...) shows nothing."""

    KEPT = 1000

    def __init__(self):
        import collections

        self.notes = collections.OrderedDict()

    def keep(self, request, text):
        import secrets

        key = secrets.token_urlsafe(12)
        self.notes[key] = (request.scope.get(security.SESSION_COOKIE), text)
        while len(self.notes) > self.KEPT:
            self.notes.popitem(last=False)
        return key

    def take(self, request, key):
        if not key:
            return None
        session, text = self.notes.get(key, (None, None))
        if text is None or session != request.scope.get(security.SESSION_COOKIE):
            return None
        del self.notes[key]
        return text


def _lifespan(body):
    import contextlib

    return contextlib.asynccontextmanager(body)


def _new_game_settings(form):
    """(rules, (d1, d2), sets, first, teams) from the new-game form, checked as the board
    checks them (rules_core.settings.check_settings)."""
    from rules_core.settings import check_settings

    rules = str(form.get("rules") or "")
    try:
        distance = int(str(form.get("distance") or ""))
        sets = int(str(form.get("sets") or "1"))
        first = int(str(form.get("first") or "1"))
    except ValueError:
        raise ValueError("distance, sets and first are whole numbers") from None
    teams = 1 if form.get("teams") else 0
    problem = check_settings(rules, (distance, distance), sets, first, teams)
    if problem:
        raise ValueError(problem)
    return rules, (distance, distance), sets, first, teams
