"""The options of a logger's links, declared once: `tools.logger` and `tools.club` take them.

    add_link_options(ap)                  # --port, --baud, --mqtt, --ca, --mqtt-prefix, --keys
    args = ap.parse_args(argv)
    source = mqtt_source(ap, args, store) # None without --mqtt; a usage error for bad files
"""

import argparse
import os


def baud(text):
    if not text.isascii() or not text.isdigit() or not 50 <= int(text) <= 10_000_000:
        raise argparse.ArgumentTypeError("%r: a serial speed is 50 to 10000000 baud" % text)
    return int(text)


def add_link_options(ap):
    """What the logger reads: serial ports and an MQTT broker (docs/network.md)."""
    ap.add_argument("--port", action="append", default=[], help="a board's serial port "
                    "(repeatable)")
    ap.add_argument("--baud", type=baud, default=115200)
    ap.add_argument("--mqtt", metavar="mqtt://USER:PASSWORD@HOST:PORT",
                    help="also log every board on this MQTT broker (docs/network.md); "
                    "mqtts://... over TLS")
    ap.add_argument("--ca", metavar="FILE",
                    help="with mqtts://: the club's CA certificate (PEM, tools.broker's ca.crt)")
    ap.add_argument("--mqtt-prefix", default="", metavar="PREFIX",
                    help="topics under PREFIX (a federation's central broker, e.g. clubs/x/)")
    ap.add_argument("--keys", metavar="FILE",
                    help="the boards' command keys for --mqtt: `BOARD-ID HEX-KEY` a line")


def mqtt_source(ap, args, store):
    """The broker source of --mqtt/--keys/--ca/--mqtt-prefix, or None without --mqtt; a bad
    URL, keys file or CA file ends the program with a usage error (the store closed first)."""
    if not args.mqtt:
        return None
    from tools.logger.mqtt import MqttSource, load_keys, parse_url

    try:
        parse_url(args.mqtt)
        keys = load_keys(args.keys) if args.keys else {}
    except (OSError, ValueError) as exc:
        store.close()
        ap.error(str(exc))
    if not keys:
        # Without a key nothing a board sends could be proven, so nothing would be stored,
        # and no command could be signed: refused rather than silently useless.
        store.close()
        ap.error("%s: a board's frames on the broker are stored only when sealed with its "
                 "key, and commands to it are signed with it (docs/network.md)"
                 % ("--keys %s names no board" % args.keys if args.keys else
                    "--mqtt needs --keys FILE (`BOARD-ID HEX-KEY` a line)"))
    if args.ca and not os.path.exists(args.ca):
        store.close()
        ap.error("--ca: no such file %s" % args.ca)
    return MqttSource(args.mqtt, keys, prefix=args.mqtt_prefix, ca=args.ca)
