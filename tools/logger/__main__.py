"""Command line of the host logger; see tools/logger/__init__.py for the forms."""

import argparse
import sys
import time

from rules_core.settings import TEAMS, check_settings, with_trait
from tools.logger import report
from tools.logger.core import Logger, say_on_stderr
from tools.logger.options import add_link_options, mqtt_source
from tools.logger.store import Store
from tools.records import RecordError, Records, StoreError

CLEAR = "\x1b[H\x1b[2J"


NEW_GAME_FORM = ("expected RULES:DISTANCE[,D2][:SETS[:FIRST]][:teams], e.g. ddbu:40, "
                 "ceb:60,50:3:2 or ceb:60:3:teams")
# The last part may name how the match is played: ceb two-man teams (CEB 28) or singles.
PLAY = {"singles": 0, "teams": 1}


def _new_game(text):
    # ceb:60,50:3:1:teams  ->  rules, distances, sets, who starts, teams; checked here,
    # before any port is opened, by the rules core's own check (what the board would
    # refuse).
    parts = text.split(":")
    teams = 0
    if len(parts) > 2 and parts[-1] in PLAY:
        teams = PLAY[parts.pop()]
    if not 2 <= len(parts) <= 4:
        raise argparse.ArgumentTypeError("%r: %s" % (text, NEW_GAME_FORM))
    rules = parts[0]
    try:
        distance = [_whole(x) for x in parts[1].split(",")]
        sets = _whole(parts[2]) if len(parts) > 2 else 1
        first = _whole(parts[3]) if len(parts) > 3 else 1
    except ValueError:
        raise argparse.ArgumentTypeError("%r: %s" % (text, NEW_GAME_FORM)) from None
    if len(distance) == 1:
        distance *= 2
    if len(distance) != 2:
        raise argparse.ArgumentTypeError("%r: one or two distances, e.g. 60 or 60,50" % text)
    problem = check_settings(rules, tuple(distance), sets, first, teams)
    if problem:
        raise argparse.ArgumentTypeError("%r: %s" % (text, problem))
    return rules, tuple(distance), sets, first, teams


def _game_number(text):
    from tools.records.game import game_number

    try:
        return game_number(text)
    except RecordError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _seconds(text):
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 < value <= 10 ** 9:  # nan and inf fail this too
        raise argparse.ArgumentTypeError("%r: a time in seconds, above 0" % text)
    return value


def _whole(text):
    if not text.isascii() or not text.isdigit():
        raise ValueError(text)
    return int(text)


def _log(argv):
    ap = argparse.ArgumentParser(
        prog="python -m tools.logger",
        description="Log scoreboards' serial links and MQTT broker into SQLite.",
        epilog="Also: python -m tools.logger export --db FILE [--game N] [--day D] [--table B] "
        "[--player NAME] [--format json|csv], "
        "stats --db FILE, view --db FILE [--once].",
    )
    add_link_options(ap)
    ap.add_argument("--db", required=True, help="SQLite file (made if missing)")
    ap.add_argument(
        "--new-game", type=_new_game, metavar="RULES:D[,D2][:SETS[:FIRST]][:teams]",
        help="start this game on the board (last part `teams`: a match of two-man teams, in "
        + ", ".join(with_trait(TEAMS)) + "); an unfinished game there is kept unless the "
        "players confirm with ok on the board, or --replace is given")
    ap.add_argument("--replace", action="store_true",
                    help="with --new-game: replace an unfinished game without asking")
    ap.add_argument("--board", metavar="ID",
                    help="with --new-game and --mqtt: the board on the broker to start it on "
                    "(its id in --keys; needed unless --keys holds one board and no --port "
                    "is given)")
    ap.add_argument("--restore-lost", action="store_true",
                    help="hand back to a board the events it lost (it came back with fewer "
                    "than are stored); without it the loss is only reported")
    ap.add_argument("--live", action="store_true", help="redraw every table each second")
    ap.add_argument("--timeout", type=_seconds, help="stop after this many seconds")
    args = ap.parse_args(argv)
    if args.replace and args.new_game is None:
        ap.error("--replace goes with --new-game")
    if not args.port and not args.mqtt:
        ap.error("give --port, --mqtt or both")
    if args.board is not None and (args.new_game is None or not args.mqtt):
        ap.error("--board goes with --new-game and --mqtt")
    try:
        store = Store(args.db)
    except StoreError as e:
        sys.stderr.write("logger: %s\n" % e)
        return 2
    board = _new_game_board(ap, args, store)
    source = mqtt_source(ap, args, store)
    logger = Logger(args.port, args.db, baud=args.baud, new_game=args.new_game, store=store,
                    replace=args.replace, say=say_on_stderr, mqtt=source,
                    restore_lost=args.restore_lost, new_game_board=board)
    drawn = [0.0]

    def draw(lg):
        if time.monotonic() - drawn[0] >= 1.0:
            drawn[0] = time.monotonic()
            sys.stdout.write(CLEAR + report.view_text(lg.store.db) + "\n")
            sys.stdout.flush()

    try:
        logger.run(timeout=args.timeout, tick=draw if args.live else None)
    except KeyboardInterrupt:
        pass
    finally:
        logger.close()
    return 0


def _report(command, argv):
    ap = argparse.ArgumentParser(prog="python -m tools.logger " + command)
    ap.add_argument("--db", required=True)
    if command == "export":
        ap.add_argument("--game", type=_game_number, metavar="N",
                        help="only this game (the `game` of an exported line)")
        ap.add_argument("--format", choices=("json", "csv"), default="json")
        ap.add_argument("--day", metavar="YYYY-MM-DD",
                        help="only the games begun that day (local time)")
        ap.add_argument("--table", metavar="BOARD", help="only the games of this board")
        ap.add_argument("--player", metavar="NAME",
                        help="only the games of this player (a name set in the club app)")
    if command == "view":
        ap.add_argument("--once", action="store_true")
    args = ap.parse_args(argv)
    try:
        records = Records.reading(args.db)  # never makes or changes a file
    except StoreError as e:
        sys.stderr.write("logger %s: %s\n" % (command, e))
        return 2
    try:
        if command == "export":
            try:
                lines = records.export_lines(args.game, args.format, args.day, args.table,
                                             args.player)
            except RecordError as e:
                sys.stderr.write("logger export: %s\n" % e)
                return 2
            for line in lines:
                print(line)
        elif command == "stats":
            print(report.stats_text(records))
        elif args.once:
            print(report.view_text(records.con))
        else:
            while True:
                sys.stdout.write(CLEAR + report.view_text(records.con) + "\n")
                sys.stdout.flush()
                time.sleep(1.0)
    except KeyboardInterrupt:
        pass
    finally:
        records.close()
    return 0


def _new_game_board(ap, args, store):
    """The board on the broker that --new-game is for, or None (serial ports only). With
    --mqtt the game goes to one board, named by --board or, when the keys file holds one
    board and no --port is given, that one; anything else is ambiguous: a usage error."""
    if args.new_game is None or not args.mqtt:
        return None
    from tools.logger.mqtt import load_keys

    try:
        keys = load_keys(args.keys) if args.keys else {}
    except (OSError, ValueError):
        return None  # mqtt_source() says what is wrong with the file
    problem = None
    if "+" in args.mqtt_prefix:
        problem = "a logger of many clubs (--mqtt-prefix with +) only listens: no --new-game"
    elif args.board is not None:
        if args.board not in keys:
            problem = ("--board %s: no key for that board in --keys, so no command to it can "
                       "be signed" % args.board)
    elif len(keys) == 1 and not args.port:
        return next(iter(keys))
    elif not keys:
        problem = ("--new-game with --mqtt: no board key (--keys FILE), so no command can "
                   "be signed")
    else:
        problem = ("--new-game with --mqtt: which board? name it with --board ID (%s%s)" % (
            "the keys file has %d boards: %s" % (len(keys), ", ".join(sorted(keys))),
            "; serial ports are given too" if args.port else ""))
    if problem:
        store.close()
        ap.error(problem)
    return args.board


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in ("export", "stats", "view"):
        return _report(argv[0], argv[1:])
    return _log(argv)


if __name__ == "__main__":
    sys.exit(main())
