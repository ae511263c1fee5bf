"""The club app's one route table, and the rules every route is held to.

    app = Starlette(routes=starlette_routes(ROUTES), ...)
    read("/results", pages.results, "results")               # GET, a plain def
    write("/game/{game}/names", pages.set_names, "set_names")  # POST, async, guarded
    stream("/events", pages.events, "events")                 # GET, async, goes on

Three kinds, checked when the app is made (a route that breaks its kind's rule is a
TypeError at start-up, never a slow page in production):

- read: GET, a plain `def` handler(request). Starlette runs it in its thread pool, so a
  page that reads SQLite never holds up the event loop (the live streams, every other
  page).
- write: POST, an `async def` handler(request, form). The form is read on the event loop
  and the club's guard (tools.club.security: same origin, form token, PIN, lockout) is
  checked before the handler runs, unless the route says ``protected=False``: writes are
  protected unless a route opts out. The handler hands its blocking work to the thread
  pool itself (run_in_threadpool), so that the write's order is the handler's to say.
- stream: GET, an `async def` handler(request) that answers at once with a response that
  goes on (server-sent events).
"""

import inspect

from starlette.routing import Route

from tools.club import pages, security


class Kind:
    def __init__(self, name, method, wants_async):
        self.name, self.method, self.wants_async = name, method, wants_async


READ = Kind("read", "GET", False)
WRITE = Kind("write", "POST", True)
STREAM = Kind("stream", "GET", True)


class Entry:
    """One route: its path, handler, name, kind and (writes) whether the guard checks it."""

    def __init__(self, kind, path, handler, name, protected=True):
        self.kind, self.path, self.handler, self.name = kind, path, handler, name
        self.protected = protected

    def check(self):
        is_async = inspect.iscoroutinefunction(self.handler)
        if is_async != self.kind.wants_async:
            raise TypeError("route %s (%s): a %s handler is %s" % (
                self.path, self.handler.__name__, self.kind.name,
                "async def" if self.kind.wants_async else "a plain def (it runs in the "
                "thread pool)"))
        if not self.protected and self.kind is not WRITE:
            raise TypeError("route %s: only a write can opt out of the guard" % self.path)

    def route(self):
        self.check()
        endpoint = self.handler
        if self.kind is WRITE:
            endpoint = _guarded(self.handler, self.protected)
        return Route(self.path, endpoint, methods=[self.kind.method], name=self.name)


def read(path, handler, name):
    return Entry(READ, path, handler, name)


def write(path, handler, name, protected=True):
    return Entry(WRITE, path, handler, name, protected)


def stream(path, handler, name):
    return Entry(STREAM, path, handler, name)


def _guarded(handler, protected):
    async def endpoint(request):
        form = await request.form()
        if protected:
            await security.require_write(request, form)
        return await handler(request, form)

    endpoint.__name__ = handler.__name__
    endpoint.protected = protected
    return endpoint


def starlette_routes(table):
    """Starlette routes of a route table (every entry checked; names unique)."""
    names = [entry.name for entry in table]
    if len(set(names)) != len(names):
        raise TypeError("route names must be unique: %s" % names)
    return [entry.route() for entry in table]


ROUTES = (
    # the live tables (tools.club.live's hub)
    read("/", pages.tables_page, "tables"),
    read("/table/{board}", pages.table_page, "table"),
    read("/overlay/{board}", pages.overlay_page, "overlay"),
    stream("/events", pages.events, "events"),
    read("/api/tables", pages.api_tables, "api_tables"),
    # a command to a board, through the logger
    write("/table/{board}/new-game", pages.new_game, "new_game"),
    # the records (tools.records): results, a game and its names
    read("/results", pages.results, "results"),
    read("/game/{game}", pages.game_page, "game"),
    write("/game/{game}/names", pages.set_names, "set_names"),
    # the players, their statistics and their names
    read("/players", pages.players, "players"),
    write("/players/rename", pages.rename_player, "rename_player"),
    # exports, and what the app refused
    read("/export.{fmt:str}", pages.export, "export"),
    read("/status.json", pages.status, "status"),
)
