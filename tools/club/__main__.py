"""Command line of the club scoreboard: the logger and the web app in one process.

    python -m tools.club --db games.db --port /dev/ttyUSB1 [--port ...] [--pin PIN]
    python -m tools.club --db games.db --mqtt mqtt://USER:PASSWORD@HOST:1883 --keys keys.txt
        [--ca ca.crt]                                    # mqtts://...:8883 over TLS
    python -m tools.club --db games.db --demo 4          # four simulated tables playing
    python -m tools.club --db games.db                   # the web app alone (a logger runs
                                                         # elsewhere on the same file)
Options: --listen HOST:PORT (default 127.0.0.1:8080; 0.0.0.0:8080 for the club's network),
--pin PIN (without it nothing can be written from the web), --allow-host NAME (a name the
club's browsers use for the app, besides localhost and IP addresses), --demo-speed X.
"""

import argparse
import os
import sys

from tools.logger.options import add_link_options, mqtt_source
from tools.records import Database, StoreError

DEFAULT_LISTEN = "127.0.0.1:8080"


def _listen(text):
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise argparse.ArgumentTypeError("%r: expected HOST:PORT, e.g. 127.0.0.1:8080" % text)
    return host.strip("[]"), int(port)


def _count(text):
    if not text.isdigit() or not 1 <= int(text) <= 32:
        raise argparse.ArgumentTypeError("%r: the number of simulated tables is 1 to 32" % text)
    return int(text)


def _speed(text):
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not 0.1 <= value <= 1000:  # nan and inf fail this too
        raise argparse.ArgumentTypeError("%r: the simulated tables play 0.1 to 1000 times "
                                         "faster than real time" % text)
    return value


def _host_name(text):
    name = text.strip().lower().rstrip(".")
    if not name or len(name) > 253 or not all(
            part and len(part) <= 63 and all(c.isascii() and (c.isalnum() or c == "-")
                                             for c in part) for part in name.split(".")):
        raise argparse.ArgumentTypeError("%r: a host name (letters, digits, - and dots)"
                                         % text)
    return name


def _more_descriptors():
    """Up to the hard limit of open files (at most 65536): connections, the database and
    the boards' ports all take descriptors (the app keeps half of them for connections)."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = 65536 if hard == resource.RLIM_INFINITY else min(hard, 65536)
    if soft != resource.RLIM_INFINITY and soft < want:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
        except (ValueError, OSError):
            pass


def parse_args(argv):
    ap = argparse.ArgumentParser(
        prog="python -m tools.club",
        description="The club scoreboard: log the boards into SQLite and show them on the "
        "web (docs/club.md).")
    ap.add_argument("--db", required=True, help="SQLite file of the logger (made if missing)")
    add_link_options(ap)  # what the logger reads, as `python -m tools.logger`
    ap.add_argument("--listen", type=_listen, default=_listen(DEFAULT_LISTEN),
                    metavar="HOST:PORT", help="where the web app listens (default %s)"
                    % DEFAULT_LISTEN)
    ap.add_argument("--pin", help="the club PIN that every write from the web needs "
                    "(without it the web app only reads)")
    ap.add_argument("--allow-host", action="append", default=[], metavar="NAME",
                    type=_host_name,
                    help="a name the club reaches the app by (e.g. club-pc.local); "
                    "repeatable. localhost and IP addresses always work; other names in "
                    "the Host header are refused (DNS rebinding)")
    ap.add_argument("--demo", type=_count, metavar="N",
                    help="N simulated tables (the real firmware on the simulated board) "
                    "play random games into --db")
    ap.add_argument("--demo-speed", type=_speed, default=4.0, metavar="X",
                    help="the simulated tables play X times faster than real time (default 4)")
    args = ap.parse_args(argv)
    if args.pin is not None and not args.pin.strip():
        ap.error("--pin must not be empty")
    if args.keys and not args.mqtt:
        ap.error("--keys goes with --mqtt")
    if args.ca and not args.mqtt:
        ap.error("--ca goes with --mqtt")
    if args.ca and not os.path.exists(args.ca):
        ap.error("--ca: no such file %s" % args.ca)
    return ap, args


def _server_class():
    import uvicorn

    class ClubServer(uvicorn.Server):
        """uvicorn, but Ctrl-C first ends the pages' event streams (they never end by
        themselves, and the server waits for open responses)."""

        def __init__(self, config, hub):
            super().__init__(config)
            self.hub = hub

        def handle_exit(self, sig, frame):
            self.hub.close_streams()
            super().handle_exit(sig, frame)

    return ClubServer


def main(argv=None):
    ap, args = parse_args(sys.argv[1:] if argv is None else argv)
    _more_descriptors()
    from tools.club.app import create_app
    from tools.club.serving import server_config

    ClubServer = _server_class()
    from tools.club.live import LiveHub
    from tools.logger.bridge import LoggerBridge
    from tools.logger.core import Logger, say_on_stderr
    from tools.logger.store import Store

    logs = bool(args.port or args.mqtt or args.demo)
    try:
        database = Database(args.db, create=logs)  # one file, one writer: the logger's
    except StoreError as e:
        sys.stderr.write("club: %s\n" % e)
        return 2
    store = Store(database)
    source = mqtt_source(ap, args, store)  # before the demo: a usage error leaves no boards
    if source is not None and "+" in source.prefix:
        sys.stderr.write("club: --mqtt-prefix with +: a federation's central broker; no "
                         "command is sent to its boards\n")
    demo = None
    ports = list(args.port)
    if args.demo:
        from tools.club.demo import Demo

        demo = Demo(args.demo, speed=args.demo_speed)
        ports += demo.host_paths
    hub = LiveHub(database)
    bridge = None
    if logs:
        logger = Logger(ports, args.db, baud=args.baud, store=store, say=say_on_stderr,
                        mqtt=source)
        bridge = LoggerBridge(logger, on_commit=hub.notify).start()
    app = create_app(database, pin=args.pin, commands=bridge, hub=hub,
                     allowed_hosts=args.allow_host)
    host, port = args.listen
    if demo is not None:
        demo.start()
    shown = "[%s]" % host if ":" in host else host
    sys.stderr.write("club: http://%s:%d/ (%s)\n" % (
        shown, port, "writes need the PIN" if args.pin else "read only: no --pin given"))
    try:
        config = server_config(app, host=host, port=port)
        try:
            ClubServer(config, hub).run()
        except KeyboardInterrupt:
            pass  # uvicorn raises the Ctrl-C again once it has shut down
    finally:
        if demo is not None:
            demo.stop()
        if bridge is not None:
            bridge.stop()
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
