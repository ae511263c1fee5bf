"""The club's web app (Starlette): live pages, server-sent events, the club's pages.

    app = create_app("games.db", pin="4711", commands=bridge)   # an ASGI app for uvicorn

The pages are tools/club/pages.py, listed in one route table (tools.club.routes.ROUTES,
which holds every route to its kind's rules: reads run in the thread pool, writes pass
the club's guard first). Every template extends base.html and is autoescaped; the rules
systems' names and traits come from the rules core's table (rules_core.settings).
"""

import collections
import contextlib
import os
import secrets

import jinja2
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.responses import JSONResponse
from starlette.routing import Mount
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates

from rules_core.settings import MAX_DISTANCE, SETS, TEAMS, has, rules_name, with_trait
from tools.club import pages, security
from tools.club.live import LiveHub, board_label
from tools.club.routes import ROUTES, starlette_routes
from tools.club.serving import BodyLimit, Limits
from tools.records import Database

HERE = os.path.dirname(os.path.abspath(__file__))
FORM_MAX_BYTES = 16384  # the largest form is a few hundred bytes


def make_templates():
    """Jinja2 with autoescape on for every template, whatever its file name."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(os.path.join(HERE, "templates")),
        autoescape=True, trim_blocks=True, lstrip_blocks=True)
    env.globals["csrf_input"] = security.csrf_input
    env.globals["rules_name"] = rules_name
    env.globals["in_sets"] = lambda rules: has(rules, SETS)
    env.globals["team_rules"] = ", ".join(with_trait(TEAMS))
    env.globals["max_distance"] = MAX_DISTANCE
    env.filters["board_label"] = board_label  # T01 rather than 543031, where it reads so
    return Jinja2Templates(env=env)


def create_app(database, pin=None, commands=None, hub=None, poll_s=None, allowed_hosts=(),
               limits=None):
    """The Starlette app over ``database`` (a tools.records.Database, or the path of a
    file a logger made). ``commands``: something with ``new_game(board, settings,
    replace)`` and ``cannot_command(board)`` that hands a command to the logger
    (tools.logger.bridge.LoggerBridge; None: the logger is not in this process and boards
    cannot be told anything). ``hub``: a LiveHub to share (made here when None).
    ``allowed_hosts``: names the app answers to besides localhost and IP addresses (the
    Host header). ``limits``: the server's connection counts (tools.club.serving.Limits)
    for /status.json."""
    if not isinstance(database, Database):
        database = Database(database, create=False)
    hub = hub or (LiveHub(database) if poll_s is None else LiveHub(database, poll_s=poll_s))
    limits = limits or Limits()

    async def refused(request, exc):
        headers = None if exc.retry_after is None else {"Retry-After": str(exc.retry_after)}
        return pages.render(request, "refused.html", status_code=exc.status,
                            message=exc.message, title="Refused", headers=headers)

    async def http_error(request, exc):
        if request.url.path.startswith(("/events", "/api/")):
            return JSONResponse({"error": exc.detail}, status_code=exc.status_code)
        return pages.render(request, "refused.html", status_code=exc.status_code,
                            message=exc.detail, title="Error %d" % exc.status_code)

    @contextlib.asynccontextmanager
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
        load=lambda: pages.records_of(app.state).pin_tries(),
        save=lambda *tries: pages.records_of(app.state).keep_pin_tries(*tries))
    guard = security.Guard(pin, limiter)
    routes = starlette_routes(ROUTES) + [
        Mount("/static", app=StaticFiles(directory=os.path.join(HERE, "static")),
              name="static")]
    app = Starlette(routes=routes, lifespan=lifespan,
                    exception_handlers={security.Refused: refused, HTTPException: http_error})
    # the last added runs first: the Host header, then the body's size, then the session
    app.add_middleware(security.SessionCookie)
    app.add_middleware(BodyLimit, limit=FORM_MAX_BYTES, limits=limits)
    app.add_middleware(security.HostCheck, names=allowed_hosts, guard=guard)
    state = app.state
    state.guard, state.limits, state.hub, state.commands = guard, limits, hub, commands
    state.database, state.templates, state.notes = database, make_templates(), Notes()
    return app


class Notes:
    """Messages for a page after a redirect, each for the browser session that caused it
    and shown once: a link someone makes up (?sent=...) shows nothing."""

    KEPT = 1000

    def __init__(self):
        self.notes = collections.OrderedDict()

    def keep(self, request, text):
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
