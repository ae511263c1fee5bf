"""The export of the records: one JSON object a game a line, or CSV with a header.

    for line in export_lines(con, game=None, fmt="json"): print(line)
    export_lines(con, fmt="csv", day="2026-11-30", table="T01", player="Anna")

`tools.logger export` prints these lines and the club app's /export.json and /export.csv
send them: the same bytes. A game is GameRecord.export(): its final state, its shots
replayed from the stored events, whether they prove the final state (`complete`), the
names given at the table (`names`; in CSV `name1`, `name2`, the last columns). Each shot
says whether it began before the pins were all set (`unset`; in CSV the game's count,
`unset_shots`: docs/protocol.md). ``day`` ("YYYY-MM-DD", local time, when the game
began), ``table`` (a table's name or board id) and ``player`` (a name) narrow it as the
club's Results page does (RecordError for a day not so written).
"""

import csv
import io
import json

from tools.records.game import day_bounds, list_games, read_game
from tools.records.names import clean_name, named, names_by_game

CSV_FIELDS = ("game", "board", "game_no", "rules", "distance1", "distance2", "status",
              "winner", "shots", "score1", "score2", "innings1", "innings2", "high1", "high2",
              "sets1", "sets2", "marked", "member1", "member2", "unset_shots", "name1", "name2")


def export_lines(con, game=None, fmt="json", day=None, table=None, player=None):
    if day:
        day_bounds(day)  # a day out of range is refused whatever the database holds
    if player:
        clean_name(player)
    numbers = [r.game for r in list_games(con, oldest_first=True)]
    if game is not None:
        numbers = [n for n in numbers if n == game]
    if day or table or player:
        chosen = ({r.game for r in list_games(con, day, table, player)}
                  if named(con) or not player else set())
        numbers = [n for n in numbers if n in chosen]
    names = names_by_game(con, None if game is None else [game])
    records = [read_game(con, n, names).export() for n in numbers]
    if fmt == "json":
        return [json.dumps(record, separators=(",", ":")) for record in records]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_FIELDS)
    for r in records:
        f = r["final"]
        writer.writerow((r["game"], r["board"], r["game_no"], f["rules"], f["distance"][0],
                         f["distance"][1], f["status"], "" if f["winner"] is None else f["winner"],
                         f["shots"], *f["score"], *f["innings"], *f["high"], *f["sets"],
                         *_marks(f), sum(1 for s in r["shots"] if s["unset"]),
                         *("" if n is None else n for n in r["names"])))
    return out.getvalue().splitlines()


def _marks(final):
    """CSV cells for the marked ball and team members; empty where the state has none
    (rules without them, singles, and states stored before the board sent them)."""
    members = final.get("members") or ("", "")
    marked = final.get("marked")
    return ("" if marked is None else marked, members[0], members[1])
