"""Command line of the host logger; see tools/logger/__init__.py for the forms."""

import argparse
import sys
import time

from rules_core.settings import check_settings
from tools.logger import report
from tools.logger.core import Logger
from tools.logger.store import Store

CLEAR = "\x1b[H\x1b[2J"


def _new_game(text):
    # ddbu:40,30:1:1  ->  rules, distances, sets, who starts
    parts = text.split(":")
    try:
        rules = parts[0]
        distance = [int(x) for x in parts[1].split(",")]
        if len(distance) == 1:
            distance *= 2
        sets = int(parts[2]) if len(parts) > 2 else 1
        first = int(parts[3]) if len(parts) > 3 else 1
    except (IndexError, ValueError):
        raise argparse.ArgumentTypeError("expected RULES:DISTANCE[,D2][:SETS[:FIRST]]") from None
    if len(distance) != 2:
        raise argparse.ArgumentTypeError("expected RULES:DISTANCE[,D2][:SETS[:FIRST]]")
    problem = check_settings(rules, tuple(distance), sets, first)
    if problem:
        raise argparse.ArgumentTypeError(problem)
    return rules, tuple(distance), sets, first


def _log(argv):
    ap = argparse.ArgumentParser(
        prog="python -m tools.logger",
        description="Log scoreboards' serial links and MQTT broker into SQLite.",
        epilog="Also: python -m tools.logger export --db FILE [--game N] [--format json|csv], "
        "stats --db FILE, view --db FILE [--once].",
    )
    ap.add_argument("--port", action="append", default=[], help="serial port (repeatable)")
    ap.add_argument("--mqtt", metavar="mqtt://USER:PASSWORD@HOST:PORT",
                    help="also log every board on this MQTT broker (docs/network.md)")
    ap.add_argument("--mqtt-prefix", default="", metavar="PREFIX",
                    help="topics under PREFIX (a federation's central broker, e.g. clubs/x/)")
    ap.add_argument("--keys", metavar="FILE",
                    help="the boards' command keys for --mqtt: `BOARD-ID HEX-KEY` a line")
    ap.add_argument("--db", required=True, help="SQLite file (made if missing)")
    ap.add_argument("--baud", type=int, default=115200)
    ap.add_argument("--new-game", type=_new_game, metavar="RULES:D[,D2][:SETS[:FIRST]]")
    ap.add_argument("--live", action="store_true", help="redraw every table each second")
    ap.add_argument("--timeout", type=float, help="stop after this many seconds")
    args = ap.parse_args(argv)
    if not args.port and not args.mqtt:
        ap.error("give --port, --mqtt or both")
    source = None
    if args.mqtt:
        from tools.logger.mqtt import MqttSource, load_keys, parse_url

        try:
            parse_url(args.mqtt)
            keys = load_keys(args.keys) if args.keys else {}
        except (OSError, ValueError) as exc:
            ap.error(str(exc))
        source = MqttSource(args.mqtt, keys, prefix=args.mqtt_prefix)
    logger = Logger(args.port, args.db, baud=args.baud, new_game=args.new_game, mqtt=source)
    drawn = [0.0]

    def draw(lg):
        if time.monotonic() - drawn[0] >= 1.0:
            drawn[0] = time.monotonic()
            sys.stdout.write(CLEAR + report.view_text(lg.store) + "\n")
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
        ap.add_argument("--game", type=int)
        ap.add_argument("--format", choices=("json", "csv"), default="json")
    if command == "view":
        ap.add_argument("--once", action="store_true")
    args = ap.parse_args(argv)
    store = Store(args.db)
    try:
        if command == "export":
            for line in report.export_lines(store, args.game, args.format):
                print(line)
        elif command == "stats":
            print(report.stats_text(store))
        elif args.once:
            print(report.view_text(store))
        else:
            while True:
                sys.stdout.write(CLEAR + report.view_text(store) + "\n")
                sys.stdout.flush()
                time.sleep(1.0)
    except KeyboardInterrupt:
        pass
    finally:
        store.close()
    return 0


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in ("export", "stats", "view"):
        return _report(argv[0], argv[1:])
    return _log(argv)


if __name__ == "__main__":
    sys.exit(main())
