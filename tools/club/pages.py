"""The club's record pages: results, one game, players, names at the table, exports.

    routes()   # Starlette routes that tools.club.app mounts

    /results[?day=YYYY-MM-DD&table=BOARD&player=NAME]   games of a day, a table, a player
    /game/KEY                                            shots, series table, chart, names form
    /game/KEY/names         (POST: name1, name2, pin, csrf)   names for the game's slots
    /players                                             statistics per name and rules id
    /players/rename        (POST: old, new, pin, csrf)   a name corrected in every game
    /export.csv, /export.json [?game=KEY|day=|table=|player=]   `tools.logger export`

Every page reads through tools.club.store.ClubStore (one per app, made on first use over
the app's database) in Starlette's thread pool; writes go through
tools.club.security.require_write (the club PIN and the form's token) first.
"""

import time

from markupsafe import Markup
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from tools.club import security
from tools.club.chart import score_chart
from tools.club.store import ClubError, ClubStore, game_key

RESULTS_LIMIT = 100  # games on one results page; a day, a table or a player narrows it


def club_store(request):
    """The app's ClubStore, made on first use over the app's database."""
    return store_of(request.app.state)


def store_of(state):
    """The ClubStore of an app's ``state`` (made on first use)."""
    store = getattr(state, "club", None)
    if store is None:
        # the logger (or `python -m tools.club` at start-up) has made or checked the file
        store = state.club = ClubStore(state.db_path, create=False)
    return store


def _render(request, name, **context):
    return request.app.state.render(request, name, **context)


def _began(game):
    """When the game began, local time, as the club reads it."""
    game["began"] = time.strftime("%Y-%m-%d %H:%M", time.localtime(game["started"] or 0))
    return game


def _game_key(request):
    try:
        return game_key(request.path_params["key"])
    except ClubError as e:
        raise HTTPException(404, "no such game: %s" % e) from None


def results(request):
    store = club_store(request)
    query = request.query_params
    day, table, player = (query.get(k) or None for k in ("day", "table", "player"))
    try:
        games = store.games(day=day, table=table, player=player, limit=RESULTS_LIMIT + 1)
    except ClubError as e:
        raise HTTPException(400, str(e)) from None
    more = len(games) > RESULTS_LIMIT
    games = [_began(g) for g in games[:RESULTS_LIMIT]]
    return _render(request, "results.html", title="Results", games=games,
                   more=more, day=day, table=table, player=player, tables=store.tables(),
                   players=store.players())


def game_page(request):
    store = club_store(request)
    key = _game_key(request)
    game = store.game(key)
    if game is None:
        raise HTTPException(404, "no game %d in this database" % key)
    _began(game)
    new_sets = [b["number"] for a, b in zip(game["shots"], game["shots"][1:], strict=False)
                if b["set"] != a["set"]]
    chart = Markup(score_chart(game["scores"], game["names"], game["final"]["distance"],
                               new_sets))
    return _render(request, "game.html", title="Game %d" % key, game=game, chart=chart,
                   players=store.players(), saved=request.query_params.get("saved"))


async def set_names(request):
    key = _game_key(request)
    form = await request.form()
    await security.require_write(request, form)
    store = club_store(request)
    names = [str(form.get("name1") or ""), str(form.get("name2") or "")]
    try:
        await run_in_threadpool(store.set_names, key, names)
    except ClubError as e:
        raise HTTPException(400, str(e)) from None
    back = str(form.get("back") or "")
    if not back.startswith("/") or back.startswith("//"):
        back = "/game/%d" % key  # only a page of this app, never another site
    return RedirectResponse(back + ("&" if "?" in back else "?") + "saved=1", status_code=303)


def players(request):
    store = club_store(request)
    stats = store.player_stats()
    by_rules = {}
    for entry in stats:
        by_rules.setdefault(entry["rules"], []).append(entry)
    return _render(request, "players.html", title="Players", by_rules=by_rules,
                   players=store.players(), renamed=request.query_params.get("renamed"))


async def rename_player(request):
    form = await request.form()
    await security.require_write(request, form)
    store = club_store(request)
    try:
        await run_in_threadpool(store.rename_player, str(form.get("old") or ""),
                                str(form.get("new") or ""))
    except ClubError as e:
        raise HTTPException(400, str(e)) from None
    return RedirectResponse("/players?renamed=1", status_code=303)


def export(request):
    fmt = request.path_params["fmt"]
    if fmt not in ("csv", "json"):
        raise HTTPException(404, "exports are /export.csv and /export.json")
    game = request.query_params.get("game")
    query = request.query_params
    day, table, player = (query.get(k) or None for k in ("day", "table", "player"))
    try:
        game = None if game in (None, "") else game_key(game)
        lines = club_store(request).export_lines(game, fmt, day, table, player)
    except ClubError as e:
        raise HTTPException(400, str(e)) from None
    body = "".join(line + "\n" for line in lines)  # as `tools.logger export` prints them
    name = "games" if game is None else "game-%d" % game
    media = "text/csv" if fmt == "csv" else "application/x-ndjson"
    return Response(body, media_type=media, headers={
        "Content-Disposition": 'attachment; filename="%s.%s"' % (name, fmt)})


def routes():
    return [
        Route("/results", results, name="results"),
        Route("/game/{key}", game_page, name="game"),
        Route("/game/{key}/names", set_names, methods=["POST"], name="set_names"),
        Route("/players", players, name="players"),
        Route("/players/rename", rename_player, methods=["POST"], name="rename_player"),
        Route("/export.{fmt:str}", export, name="export"),
    ]
