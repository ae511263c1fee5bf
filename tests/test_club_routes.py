"""The club app's one route table: every route is held to its kind's rules at start-up,
reads run in the thread pool, and writes are guarded unless a route opts out."""

import asyncio
import re

import pytest
from club_helpers import client_for
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse

from tools.club.app import create_app
from tools.club.routes import (
    READ,
    ROUTES,
    STREAM,
    WRITE,
    Entry,
    read,
    starlette_routes,
    stream,
    write,
)
from tools.logger.store import Store


def test_every_route_of_the_app_keeps_its_kinds_rules():
    kinds = {entry.name: entry.kind for entry in ROUTES}
    assert kinds["results"] is READ and kinds["events"] is STREAM
    assert {name for name, kind in kinds.items() if kind is WRITE} == {
        "new_game", "set_names", "rename_player"}
    for entry in ROUTES:
        entry.check()  # raises for a route that breaks its kind's rule
        assert entry.protected, entry.path  # no route of the app opts out


def _page(request):
    return PlainTextResponse("page")


async def _async_page(request):
    return PlainTextResponse("page")


async def _save(request, form):
    return PlainTextResponse("saved")


def _save_blocking(request, form):
    return PlainTextResponse("saved")


@pytest.mark.parametrize("entry, says", [
    (read("/a", _async_page, "a"), "plain def"),
    (write("/a", _save_blocking, "a"), "async def"),
    (stream("/a", _page, "a"), "async def"),
    (Entry(READ, "/a", _page, "a", protected=False), "opt out"),
])
def test_a_route_that_breaks_its_kinds_rule_stops_the_app_at_start(entry, says):
    with pytest.raises(TypeError, match=says):
        starlette_routes([entry])
    with pytest.raises(TypeError, match="unique"):
        starlette_routes([read("/a", _page, "a"), read("/b", _page, "a")])


def test_every_write_of_the_app_is_refused_without_the_pin(tmp_path):
    db = str(tmp_path / "games.db")
    Store(db).close()
    app = create_app(db, pin="4711")
    writes = [entry for entry in ROUTES if entry.kind is WRITE]
    with client_for(app) as client:
        for entry in writes:
            path = re.sub(r"\{[^}]*\}", "1", entry.path)
            refused = client.post(path, data={"name1": "Anna", "old": "a", "new": "b",
                                              "rules": "ddbu", "distance": "40"})
            assert refused.status_code == 403, (entry.path, refused.status_code)
        assert client.get("/status.json").json()["refusals"]["csrf"] == len(writes)


def test_a_write_that_opts_out_is_not_guarded_and_a_read_runs_off_the_event_loop(tmp_path):
    seen = {}

    def where(request):
        try:
            asyncio.get_running_loop()
            seen["loop"] = True
        except RuntimeError:
            seen["loop"] = False  # a worker thread: no event loop runs here
        return PlainTextResponse("read")

    db = str(tmp_path / "games.db")
    Store(db).close()
    guarded = create_app(db, pin="4711")
    app = Starlette(routes=starlette_routes([
        read("/where", where, "where"), write("/open", _save, "open", protected=False),
        write("/shut", _save, "shut")]))
    app.state.guard = guarded.state.guard
    with client_for(app) as client:
        assert client.get("/where").text == "read" and seen == {"loop": False}
        assert client.post("/open", data={}).text == "saved"
        with pytest.raises(Exception, match="form expired"):  # the guard's refusal
            client.post("/shut", data={})
