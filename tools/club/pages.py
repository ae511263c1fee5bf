"""The club app's pages: the live tables, results, one game, players, names, exports.

    /                     every table (the club TV)      /table/T01     one table (a phone)
    /overlay/T01          a transparent strip for a stream
    /tables/print         a QR code per table, to print  /qr/T01.svg    one table's QR code
    /events               the server-sent events that keep the live pages live
    /api/tables           the tables as JSON             /status.json   refusals counted
    /table/T01/new-game   (POST: rules, distance or distance1 and distance2, sets, first,
                          teams, replace, name1, name2)
    /results[?day=YYYY-MM-DD&table=BOARD&player=NAME]   games of a day, a table, a player
    /game/N               shots, series table, chart, names form
    /game/N/names         (POST: name1, name2)          names for the game's slots
    /players              statistics per name and rules id
    /players/rename       (POST: old, new)              a name corrected in every game
    /export.csv, /export.json [?game=N|day=|table=|player=]   `tools.logger export`

A table is called by its name (T01: tools.records.game.table_label) in every path and
link; its board id (hex) is understood too. tools.club.routes lists them (reads are plain
functions run in the thread pool, writes are async and get the form after the club's guard
took it: the PIN and the form's token).
Everything stored is read through tools.records (one Records per app, made on first use
over the app's database); what the live pages show comes from the hub (tools.club.live).
"""

import functools
import io
import time

from markupsafe import Markup
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.responses import JSONResponse, RedirectResponse, Response, StreamingResponse

from rules_core.settings import RULES_IDS, SETS, TEAMS, has
from tools.club import security
from tools.club.chart import score_chart
from tools.records import RecordError, Records
from tools.records.game import find_board, game_number, table_label

RESULTS_LIMIT = 100  # games on one results page; a day, a table or a player narrows it
NO_LOGGER = ("The logger does not run with this web app: boards cannot be told anything "
             "from here")


def records_of(state):
    """The Records of an app's ``state`` (made on first use over its database: a logger,
    or `python -m tools.club` at start-up, has made or checked the file)."""
    records = getattr(state, "records", None)
    if records is None:
        records = state.records = Records.open(state.database)
    return records


def club_records(request):
    return records_of(request.app.state)


def render(request, name, status_code=200, headers=None, **context):
    """A page from its template, with what every page shows (may the visitor write, and
    the lockout of wrong PINs, if any)."""
    state = request.app.state
    guard = state.guard
    context.setdefault("writable", guard.writable)
    wait = guard.lockout(request)
    context.setdefault("lockout", security.wait_text(wait) if wait > 0 else None)
    return state.templates.TemplateResponse(request, name, context, status_code=status_code,
                                            headers=headers)


# -- the live tables ------------------------------------------------------------------------------


def _board_table(request):
    name = request.path_params["board"]
    current = request.app.state.hub.current
    table = current.get(find_board(name, current))
    if table is None:
        raise HTTPException(404, "no table called %r has been seen" % name)
    return table


def codes_base(request):
    """The address the tables' QR codes hold: the club's --public-url when it gave one,
    else the address this browser used. None when that is a loopback address (the TV
    opened on the club PC as localhost): no phone can reach it, so no code is shown."""
    public = request.app.state.public_url
    if public:
        return public
    host = request.url.hostname or ""
    if host == "localhost" or host == "::1" or host.startswith("127."):
        return None
    return "%s://%s" % (request.url.scheme, request.url.netloc)


def table_url(request, label):
    """The address of a table's page, as its QR code holds it."""
    base = codes_base(request) or "%s://%s" % (request.url.scheme, request.url.netloc)
    return "%s/table/%s" % (base, label)


def tables_page(request):
    return render(request, "tables.html", tables=request.app.state.hub.snapshot(),
                  title="Tables", codes=codes_base(request) is not None)


def table_page(request):
    table = _board_table(request)
    state = request.app.state
    commands = state.commands
    problem = NO_LOGGER if commands is None else commands.cannot_command(table["board"])
    records = club_records(request)
    sent = state.notes.take(request, request.query_params.get("sent"))
    asked = None
    if isinstance(sent, tuple):  # (what the page says, the settings the form sent)
        sent, asked = sent
    return render(request, "table.html", table=table, title="Table %s" % table["label"],
                  command_problem=problem, rules=RULES_IDS, sent=sent,
                  form=form_values(table, asked), saved=request.query_params.get("saved"),
                  players=records.players(), averages=averages(records),
                  sets_rules=[r for r in RULES_IDS if has(r, SETS)],
                  teams_rules=[r for r in RULES_IDS if has(r, TEAMS)])


def form_values(table, asked=None):
    """What the new-game form shows: what this browser just sent (asked), else the new
    game that waits for the board, else the game on the table now, with its names."""
    if asked:
        return asked
    if table.get("pending"):
        return table["pending"]
    s = table["state"]
    return {"rules": s["rules"], "distance": list(s["distance"]), "sets": s.get("best_of", 1),
            "first": s.get("first", 1), "teams": 1 if s.get("members") else 0,
            "names": list(table["names"])}


def averages(records):
    """{rules id: {name: [average, games, high]}} of every named player (the new-game
    form's suggested distances; never one rules system's figures for another's)."""
    out = {}
    for entry in records.player_stats():
        out.setdefault(entry["rules"], {})[entry["name"]] = [
            entry["average"], entry["games"], entry["high"]]
    return out


def overlay_page(request):
    return render(request, "overlay.html", table=_board_table(request), title="Overlay")


def print_page(request):
    tables = request.app.state.hub.snapshot()
    return render(request, "print.html", title="Tables to print",
                  tables=[(t, table_url(request, t["label"])) for t in tables],
                  local=codes_base(request) is None)


@functools.lru_cache(maxsize=256)
def qr_svg(url):
    """The QR code of ``url`` as SVG text (segno: error correction M, black on white, a
    quiet zone of 4 modules as the standard asks)."""
    import segno

    out = io.BytesIO()
    segno.make(url, error="m").save(out, kind="svg", scale=8, border=4, dark="#000",
                                    light="#fff", xmldecl=False, svgclass="qr",
                                    title="QR code: " + url)
    return out.getvalue().decode()


def qr_code(request):
    table = _board_table(request)
    return Response(qr_svg(table_url(request, table["label"])), media_type="image/svg+xml",
                    headers={"Cache-Control": "max-age=3600"})


async def events(request):
    return StreamingResponse(request.app.state.hub.stream(), media_type="text/event-stream",
                             headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})


def api_tables(request):
    return JSONResponse({"tables": request.app.state.hub.snapshot()})


def status(request):
    state = request.app.state
    guard = state.guard
    return JSONResponse({"refusals": guard.refusals, "writable": guard.writable,
                         "clients": len(state.hub.clients), "tables": len(state.hub.current),
                         "pin": guard.limiter.status(), "connections": state.limits.status()})


async def new_game(request, form):
    from tools.linkcodes import ERR_ASKED

    table = _board_table(request)
    state = request.app.state
    commands = state.commands
    if commands is None:
        raise HTTPException(409, NO_LOGGER)
    again = str(form.get("again") or "")
    try:
        names = [str(form.get("name1") or ""), str(form.get("name2") or "")]
        if again in ("same", "rematch"):  # the players of the game on the table
            names = [n or "" for n in table["names"]]
        if again == "rematch":  # and its settings; the other player opens
            s = table["state"]
            settings = (s["rules"], tuple(s["distance"]), s.get("best_of", 1),
                        3 - s.get("first", 1), 1 if s.get("members") else 0)
        else:
            settings = new_game_settings(form)
        if again or "name1" in form or "name2" in form:  # the players are named: kept
            # for the board's next game (it exists only once the board has started it)
            await run_in_threadpool(club_records(request).set_next_names, table["board"],
                                    names)
    except (ValueError, RecordError) as e:
        raise HTTPException(400, str(e)) from None
    outcome = await run_in_threadpool(commands.new_game, table["board"], settings,
                                      bool(form.get("replace")))
    if not outcome.sent:
        raise HTTPException(409, "Nothing was sent to the board: %s." % outcome.why)
    rules, distance, sets, first, teams = settings
    asked = {"rules": rules, "distance": list(distance), "sets": sets, "first": first,
             "teams": teams, "names": [n or None for n in names]}
    if outcome.answer is None or outcome.answer == ("error", ERR_ASKED):
        # the players' ok on the board starts it: the table's pages say it waits
        state.hub.pend(table["board"], asked, lambda: commands.answer_of(outcome))
    note = state.notes.keep(request, (sent_text(outcome.answer), asked))
    return RedirectResponse("/table/%s?sent=%s" % (table["label"], note), status_code=303)


def new_game_settings(form):
    """(rules, (d1, d2), sets, first, teams) from the new-game form, checked as the board
    checks them (rules_core.settings.check_settings). One distance for both
    (``distance``), or one each (``distance1``, ``distance2``: a handicap)."""
    from rules_core.settings import check_settings

    rules = str(form.get("rules") or "")
    try:
        common = str(form.get("distance") or "")
        distance = (int(str(form.get("distance1") or common)),
                    int(str(form.get("distance2") or common)))
        sets = int(str(form.get("sets") or "1"))
        first = int(str(form.get("first") or "1"))
    except ValueError:
        raise ValueError("distance, sets and first are whole numbers") from None
    teams = 1 if form.get("teams") else 0
    problem = check_settings(rules, distance, sets, first, teams)
    if problem:
        raise ValueError(problem)
    return rules, distance, sets, first, teams


def sent_text(answer):
    """What the page says about a new game the logger did send: from the board's answer
    (None: none came within a couple of seconds)."""
    from tools.linkcodes import ERR_ASKED, ERR_BUSY

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


# -- the records ----------------------------------------------------------------------------------


def _began(game):
    """When the game began, local time, as the club reads it."""
    game.began = time.strftime("%Y-%m-%d %H:%M", time.localtime(game.started or 0))
    return game


def _game_number(request):
    try:
        return game_number(request.path_params["game"])
    except RecordError as e:
        raise HTTPException(404, "no such game: %s" % e) from None


def results(request):
    records = club_records(request)
    query = request.query_params
    day, table, player = (query.get(k) or None for k in ("day", "table", "player"))
    try:
        games = records.games(day=day, table=table, player=player, limit=RESULTS_LIMIT + 1)
    except RecordError as e:
        raise HTTPException(400, str(e)) from None
    more = len(games) > RESULTS_LIMIT
    games = [_began(g) for g in games[:RESULTS_LIMIT]]
    tables = [(table_label(board), count) for board, count in records.tables()]
    if table:
        table = table_label(find_board(table, [b for b, _ in records.tables()]) or table)
    return render(request, "results.html", title="Results", games=games,
                  more=more, day=day, table=table, player=player, tables=tables,
                  players=records.players())


def game_page(request):
    records = club_records(request)
    number = _game_number(request)
    game = records.game(number)
    if game is None:
        raise HTTPException(404, "no game %d in this database" % number)
    _began(game)
    new_sets = [b["number"] for a, b in zip(game.shots, game.shots[1:], strict=False)
                if b["set"] != a["set"]]
    chart = Markup(score_chart(game.scores, game.names, game.final["distance"], new_sets,
                               game.set_results))
    return render(request, "game.html", title="Game %d" % number, game=game, chart=chart,
                  players=records.players(), saved=request.query_params.get("saved"),
                  in_play=game.final.get("best_of", 1) > 1 and game.final["status"] != "finished")


async def set_names(request, form):
    number = _game_number(request)
    names = [str(form.get("name1") or ""), str(form.get("name2") or "")]
    try:
        await run_in_threadpool(club_records(request).set_names, number, names)
    except RecordError as e:
        raise HTTPException(400, str(e)) from None
    back = str(form.get("back") or "")
    if not back.startswith("/") or back.startswith("//"):
        back = "/game/%d" % number  # only a page of this app, never another site
    return RedirectResponse(back + ("&" if "?" in back else "?") + "saved=1", status_code=303)


def players(request):
    records = club_records(request)
    by_rules = {}
    for entry in records.player_stats():
        by_rules.setdefault(entry["rules"], []).append(entry)
    return render(request, "players.html", title="Players", by_rules=by_rules,
                  players=records.players(), renamed=request.query_params.get("renamed"))


async def rename_player(request, form):
    try:
        await run_in_threadpool(club_records(request).rename_player,
                                str(form.get("old") or ""), str(form.get("new") or ""))
    except RecordError as e:
        raise HTTPException(400, str(e)) from None
    return RedirectResponse("/players?renamed=1", status_code=303)


def export(request):
    fmt = request.path_params["fmt"]
    if fmt not in ("csv", "json"):
        raise HTTPException(404, "exports are /export.csv and /export.json")
    query = request.query_params
    game = query.get("game")
    day, table, player = (query.get(k) or None for k in ("day", "table", "player"))
    try:
        game = None if game in (None, "") else game_number(game)
        lines = club_records(request).export_lines(game, fmt, day, table, player)
    except RecordError as e:
        raise HTTPException(400, str(e)) from None
    body = "".join(line + "\n" for line in lines)  # as `tools.logger export` prints them
    name = "games" if game is None else "game-%d" % game
    media = "text/csv" if fmt == "csv" else "application/x-ndjson"
    return Response(body, media_type=media, headers={
        "Content-Disposition": 'attachment; filename="%s.%s"' % (name, fmt)})
