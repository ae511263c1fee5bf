"""The words of a table's card for the first paint: what live.js then writes from each event.

    band_text(table)            # "20 remaining: Anna", "Set to Ben, 60 : 56", "Break 4:12"
    remaining_text(table, 1)    # "12 to go", or in russian "past the distance"
    set_results_text(table)     # "sets 60 : 56 · 48 : 60"
    pending_text(table)         # "New game waiting for ok on the board: ..."

``table`` is a table as the live hub gives it (tools.club.live: board, label, state,
names, set_results, pending, ...). live.js says the same words (tools/club/static/live.js,
`announcement`, `remaining`, `setResults`, `pendingText`); a browser test loads each page
with live.js blocked and again with it, and compares the two.
"""

import time

from rules_core.settings import PAST, has, rules_name

BREAK_S = 300  # the board's break countdown (firmware/screens.py)


def who(table, player):
    name = table["names"][player - 1]
    return name if name else "Player %d" % player


def past_distance(table, player):
    """In rules where a score may pass the distance without ending the game (russian: a
    lone carambole), the player is at or past it and the game goes on."""
    s = table["state"]
    return (has(s["rules"], PAST) and s["status"] != "finished"
            and s["score"][player - 1] >= s["distance"][player - 1])


def remaining_text(table, player):
    if past_distance(table, player):
        return "past the distance"
    return "%d to go" % table["state"]["remaining"][player - 1]


def clock(seconds):
    seconds = max(0, int(round(seconds)))
    return "%d:%02d" % divmod(seconds, 60)


def band_text(table, now=None):
    s = table["state"]
    now = time.time() if now is None else now
    if s["status"] == "finished":
        if s["winner"] == "tie":
            return "Draw"
        if not s["winner"]:
            return "Finished"
        said = "Winner: " + who(table, s["winner"])
        if s.get("best_of", 1) > 1:
            said += ", %d : %d in sets" % tuple(s["sets"])
        return said
    if s["status"] == "break":
        since = table.get("break_since") or table.get("updated") or now
        return "Break " + clock(BREAK_S - (now - since))
    said = []
    for item in s.get("announce") or ():
        what, _, p = item.partition(":")
        name = who(table, int(p)) if p else ""
        if what == "20-remaining":
            said.append("20 remaining: " + name)
        elif what == "distance":
            if "set:" + p in s["announce"]:
                continue  # a set won: "Set to ..." says it
            if past_distance(table, int(p)):
                said.append(name + " is past the distance with a lone carambole: the game "
                            "goes on")
            else:
                said.append(name + " reached the distance")
        elif what == "last-series":
            said.append("Last series: " + name)
        elif what == "set":
            results = table.get("set_results") or ()
            said.append("Set to " + name + (", %d : %d" % tuple(results[-1]["score"])
                                            if results else ""))
    return " · ".join(said)


def set_results_text(table):
    results = table.get("set_results") or ()
    return "sets " + " · ".join("%d : %d" % tuple(r["score"]) for r in results) \
        if results else ""


def pending_text(table, now=None):
    p = table.get("pending")
    if not p:
        return ""
    now = time.time() if now is None else now
    d = p["distance"]
    what = "%s to %s" % (rules_name(p["rules"]), d[0] if d[0] == d[1] else "%d / %d" % tuple(d))
    if p.get("sets", 1) > 1:
        what += ", best of %d" % p["sets"]
    return "New game waiting for ok on the board: %s · %s left" % (
        what, clock(p["until"] - now))
