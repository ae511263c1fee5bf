"""Write and check a board's /board.cfg: from flags, or a short dialogue, with its CRC line.

    python -m tools.config write board.cfg --display max7219 --standing-level 1
    python -m tools.config write board.cfg --colon-marker --buzzer-pin 2 \\
        --ssid club --wifi-password PW --broker 192.168.1.10 --mqtt-user table3 \\
        --mqtt-password PW --id table3 --new-key
    python -m tools.config ask board.cfg     # asks, one setting a line (make config)
    python -m tools.config check board.cfg   # what is wrong, key by key (exit 2), or "ok"

`write` puts exactly the settings it is given in the file (the board takes its defaults
for the others: docs/persistence.md); `ask` starts from the file's settings when it
exists. Both refuse, with exit status 2 and nothing written, a value the board would not
take, and a buzzer on a pin the board already uses for something else (the board profile,
firmware/boards/esp32_devkit.py, says which). The file is written by
`boardlib.config.save_config`, the board's own writer: the `PBC1 <crc32>` line and the
JSON the board reads. `check` reads a file as the board does (`boardlib.config`) and says
whether the board would take it whole, or which keys it would replace by their defaults
(showing `Err 32`), or that it would take none (`Err 31`). `make deploy PORT=...
CONFIG=board.cfg` copies a checked file to the board as /board.cfg.
"""

import argparse
import json
import os
import sys

from boardlib import config, netconfig
from firmware.boards import esp32_devkit

PROFILE = "firmware/boards/esp32_devkit.py"
USAGE_ERROR = 2


class ConfigError(Exception):
    pass


def describe_check(check):
    """What a value of boardlib.config's check takes, in words."""
    if check[0] == "int":
        return "a whole number %d-%d" % (check[1], check[2])
    if check[0] == "int or 0":
        return "0 (off) or a whole number %d-%d" % (check[1], check[2])
    if all(isinstance(c, bool) for c in check):
        return "true or false"
    return "one of %s" % ", ".join(str(c) for c in check)


def pins_in_use(cfg, profile=esp32_devkit):
    """{gpio: what the board uses it for} with this configuration."""
    used = {}
    for i, gpio in enumerate(profile.SPOTS):
        used[gpio] = "spot %d's sensor" % (i + 1)
    for name, gpio in profile.BUTTONS.items():
        used[gpio] = "the %s button" % name
    display = cfg.get("display", "tm1637")
    if display == "tm1637":
        for side, module in (("left", profile.TM1637_LEFT), ("right", profile.TM1637_RIGHT)):
            for line in ("clk", "dio"):
                used[module[line]] = "the %s TM1637's %s" % (side, line.upper())
    elif display == "max7219":
        for line in ("sck", "mosi", "cs"):
            used[profile.MAX7219[line]] = "the MAX7219's %s" % line.upper()
    if cfg.get("link", "uart2") == "uart2":
        used[profile.LINK_UART["tx"]] = "the data link's TX"
        used[profile.LINK_UART["rx"]] = "the data link's RX"
    return used


def problems(cfg, profile=esp32_devkit):
    """Every problem of a configuration, each naming its key: the board's own checks, with
    what the key takes, and a buzzer on a pin the board uses for something else."""
    found = []
    for problem in config.problems(cfg):
        key = problem.split(":", 1)[0]
        check = next((c for k, _, c in config.FIELDS if k == key), None)
        if check is not None and "bad value" in problem:
            problem += ": %s" % describe_check(check)
        found.append(problem)
    pin = cfg.get("buzzer_pin")
    used = pins_in_use(cfg, profile)
    if isinstance(pin, int) and pin in used:
        found.append("buzzer_pin: GPIO%d is %s (%s)" % (pin, used[pin], PROFILE))
    return found


def check_file(path):
    """(lines to print, ok): what the board would make of the file at `path`."""
    try:
        stored, damage = config.read_stored(path)
    except OSError as exc:
        return ["%s: cannot read it (%s)" % (path, exc.strerror or exc)], False
    if stored is None:
        return ["%s: %s: the board would use its defaults for everything and show Err %d"
                % (path, damage, config.ERR_CONFIG_CORRUPT)], False
    found = problems(stored)
    if found:
        lines = ["%s: %s" % (path, problem) for problem in found]
        lines.append("%s: the board would use the defaults of these keys and show Err %d"
                     % (path, config.ERR_CONFIG_VALUE))
        return lines, False
    with open(path, "rb") as f:
        signed = f.read(len(config._HEADER)) == config._HEADER.encode()
    lines = ["%s: ok: the board takes every setting%s" % (
        path, "" if signed else " (no CRC line: a damaged file would go unnoticed; "
        "python -m tools.config write adds one)")]
    lines += ["  %s: %s" % (key, json.dumps(_shown(key, value))) for key, value in stored.items()]
    return lines, True


_SECRETS = ("password", "pass", "key")


def _shown(key, value):
    """A setting as `check` prints it: the network's passwords and key left out."""
    if key == "net" and isinstance(value, dict):
        return {k: "..." if k in _SECRETS and v else v for k, v in value.items()}
    return value


def write(path, cfg):
    """Check `cfg` (ConfigError naming each bad key), then write it with its CRC line."""
    found = problems(cfg)
    if found:
        raise ConfigError("; ".join(found))
    config.save_config(path, cfg)


def new_key():
    """A fresh command key for a board with network settings: 32 random bytes, as hex."""
    return os.urandom(32).hex()


def keys_line(cfg):
    """The line for the logger's --keys file (docs/network.md), or None."""
    net = cfg.get("net")
    if not net or not net.get("id"):
        return None
    return "%s %s" % (net["id"], net["key"])


# -- flags ----------------------------------------------------------------------------------------


def _on_off(text):
    if text in ("on", "yes", "true"):
        return True
    if text in ("off", "no", "false"):
        return False
    raise argparse.ArgumentTypeError("on or off, not %r" % text)


def _broker(text):
    host, sep, port = text.rpartition(":")
    if not sep:
        return text, None
    if not port.isdigit():
        raise argparse.ArgumentTypeError("HOST or HOST:PORT, not %r" % text)
    return host, int(port)


def settings_from_flags(args):
    """The configuration the flags give (only the settings given)."""
    cfg = {}
    for key in ("display", "standing_level", "link", "brightness", "buzzer_pin", "buzzer",
                "colon_marker", "watchdog_ms"):
        value = getattr(args, key)
        if value is not None:
            cfg[key] = value
    net_flags = (args.ssid, args.wifi_password, args.broker, args.mqtt_user,
                 args.mqtt_password, args.id, args.key, args.new_key or None, args.tls or None)
    if any(flag is not None for flag in net_flags):
        if args.key is not None and args.new_key:
            raise ConfigError("net: give --key HEX or --new-key, not both")
        net = {}
        for key, value in (("ssid", args.ssid), ("password", args.wifi_password),
                           ("user", args.mqtt_user), ("pass", args.mqtt_password),
                           ("id", args.id), ("key", args.key)):
            if value is not None:
                net[key] = value
        if args.broker is not None:
            net["host"], port = args.broker
            if port is not None:
                net["port"] = port
        if args.tls:
            net["tls"] = True
        if args.new_key:
            net["key"] = new_key()
        for key, flag in (("ssid", "--ssid"), ("host", "--broker"), ("key", "--key or --new-key")):
            if key not in net:
                raise ConfigError("net.%s is missing: a board on the network needs %s"
                                  % (key, flag))
        cfg["net"] = net
    return cfg


# -- the dialogue ---------------------------------------------------------------------------------


class Dialogue:
    """Asks one setting a line on `read`/`say`; an empty answer takes the one in brackets."""

    def __init__(self, read=input, say=print):
        self.read = read
        self.say = say

    def ask(self, question, default, parse, hint=None):
        if hint:
            self.say(hint)
        while True:
            try:
                answer = self.read("%s [%s]: " % (question, _answer(default))).strip()
            except EOFError:
                raise ConfigError("the questions were not all answered: nothing written") from None
            if not answer:
                if default is None:
                    self.say("  an answer is needed")
                    continue
                return default
            try:
                return parse(answer)
            except ValueError as exc:
                self.say("  %s" % exc)

    def run(self, start):
        cfg = {k: v for k, v in start.items() if k != "game"}
        if "game" in start:
            cfg["game"] = start["game"]
        cfg["display"] = self.ask(
            "display (tm1637, max7219 or none)", cfg.get("display", "tm1637"),
            _choice(("tm1637", "max7219", "none")),
            hint="tm1637: two 4-digit modules; max7219: one 8-digit module")
        if cfg["display"] == "tm1637":
            cfg["colon_marker"] = self.ask(
                "are they 'clock' modules, with a colon and no decimal points? (yes/no)",
                cfg.get("colon_marker", False), _yes_no)
        else:
            cfg.pop("colon_marker", None)
        cfg["standing_level"] = self.ask(
            "sensor level while a pin stands (0 or 1)",
            cfg.get("standing_level", esp32_devkit.SPOT_STANDING_LEVEL),
            _choice((0, 1), int),
            hint="0: a reed or hall switch closed by a magnet in the pin, or an IR module "
                 "whose output goes low when it sees the pin; 1: a sensor that goes high")
        cfg["link"] = self.ask(
            "data link to the logger (uart2, uart0 or off)",
            cfg.get("link", "uart2"), _choice(("uart2", "uart0", "off")),
            hint="uart2: a USB-serial adapter on GPIO%d (TX) and GPIO%d (RX); uart0: the "
                 "board's USB port, shared with the REPL; off: no logger" % (
                     esp32_devkit.LINK_UART["tx"], esp32_devkit.LINK_UART["rx"]))
        used = pins_in_use(cfg)
        pin = self.ask("buzzer GPIO (or none)", cfg.get("buzzer_pin", "none"),
                       _buzzer_pin(used), hint="used by boards with a buzzer: the GPIO of "
                       "its passive piezo")
        if pin == "none":
            cfg.pop("buzzer_pin", None)
            cfg.pop("buzzer", None)
        else:
            cfg["buzzer_pin"] = pin
            cfg["buzzer"] = self.ask("buzzer on (yes/no)", cfg.get("buzzer", True), _yes_no)
        if self.ask("network: join the club's WiFi and MQTT broker? (yes/no)", "net" in cfg,
                    _yes_no):
            cfg["net"] = self.network(cfg.get("net", {}))
        else:
            cfg.pop("net", None)
        return cfg

    def network(self, net):
        out = {}
        out["ssid"] = self.ask("WiFi name (SSID)", net.get("ssid"), _text("ssid", 1, 32))
        out["password"] = self.ask("WiFi password", net.get("password", ""),
                                   _text("password", 0, 64, empty="-"))
        out["host"] = self.ask("broker address (an IP address is best)", net.get("host"),
                               _text("host", 1, 64))
        out["tls"] = self.ask("TLS to the broker (the club's CA as /ca.der)? (yes/no)",
                              net.get("tls", False), _yes_no)
        out["port"] = self.ask("broker port", net.get("port", 8883 if out["tls"] else 1883),
                               _port)
        out["user"] = self.ask("the board's broker user", net.get("user", ""),
                               _text("user", 0, 64, empty="-"))
        out["pass"] = self.ask("the board's broker password", net.get("pass", ""),
                               _text("pass", 0, 64, empty="-"))
        out["id"] = self.ask("the board's id (its topics pinboard/ID/...)", net.get("id"),
                             _board_id)
        out["key"] = self.ask("command key, 32-128 hex digits ('new' makes one)",
                              net.get("key", "new"), _key)
        problem = netconfig.problem(out)
        if problem:
            raise ConfigError(problem)
        return out


def _answer(default):
    if default is True:
        return "yes"
    if default is False:
        return "no"
    return "" if default is None else default


def _choice(choices, cast=str):
    def parse(answer):
        try:
            value = cast(answer)
        except ValueError:
            value = None
        if value not in choices:
            raise ValueError("one of %s" % ", ".join(str(c) for c in choices))
        return value
    return parse


def _yes_no(answer):
    if answer.lower() in ("y", "yes"):
        return True
    if answer.lower() in ("n", "no"):
        return False
    raise ValueError("yes or no")


def _buzzer_pin(used):
    allowed = next(c for k, _, c in config.FIELDS if k == "buzzer_pin")

    def parse(answer):
        if answer.lower() == "none":
            return "none"
        number = answer[4:] if answer.upper().startswith("GPIO") else answer
        pin = int(number) if number.isdigit() else None
        if pin not in allowed:
            raise ValueError("a GPIO that can drive a buzzer: %s (or none)"
                             % ", ".join(str(p) for p in allowed if p not in used))
        if pin in used:
            raise ValueError("GPIO%d is %s" % (pin, used[pin]))
        return pin
    return parse


def _text(key, shortest, longest, empty=None):
    def parse(answer):
        if empty is not None and answer == empty:
            return ""
        if not shortest <= len(answer) <= longest:
            raise ValueError("%s: %d-%d characters" % (key, shortest, longest))
        return answer
    return parse


def _port(answer):
    if not answer.isdigit() or not 1 <= int(answer) <= 65535:
        raise ValueError("a port number 1-65535")
    return int(answer)


def _board_id(answer):
    problem = netconfig.problem({"ssid": "x", "host": "x", "key": "00" * 16, "id": answer})
    if problem:
        raise ValueError(problem)
    return answer


def _key(answer):
    if answer == "new":
        return new_key()
    problem = netconfig.problem({"ssid": "x", "host": "x", "key": answer})
    if problem:
        raise ValueError(problem)
    return answer.lower()


# -- the command ----------------------------------------------------------------------------------


def parser():
    p = argparse.ArgumentParser(prog="python -m tools.config", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="command", required=True, metavar="write|ask|check")
    w = sub.add_parser("write", help="write FILE from the flags")
    w.add_argument("file")
    w.add_argument("--display", help="tm1637, max7219 or none")
    w.add_argument("--colon-marker", dest="colon_marker", action="store_const", const=True,
                   help="TM1637 'clock' modules: the turn marker on the colon")
    w.add_argument("--standing-level", type=int, metavar="0|1",
                   help="what a spot's line reads while its pin stands")
    w.add_argument("--link", help="uart2, uart0 or off")
    w.add_argument("--brightness", type=int, metavar="0-7")
    w.add_argument("--watchdog-ms", type=int, metavar="MS")
    w.add_argument("--buzzer-pin", type=int, metavar="GPIO",
                   help="used by boards with a buzzer: its GPIO")
    w.add_argument("--buzzer", type=_on_off, metavar="on|off",
                   help="used by boards with a buzzer: whether it sounds")
    w.add_argument("--ssid")
    w.add_argument("--wifi-password")
    w.add_argument("--broker", type=_broker, metavar="HOST[:PORT]")
    w.add_argument("--tls", action="store_true")
    w.add_argument("--mqtt-user")
    w.add_argument("--mqtt-password")
    w.add_argument("--id", help="the board's id on the network")
    w.add_argument("--key", help="the board's command key, hex")
    w.add_argument("--new-key", action="store_true", help="make a new command key")
    a = sub.add_parser("ask", help="ask for each setting, then write FILE")
    a.add_argument("file")
    c = sub.add_parser("check", help="say whether the board takes FILE, key by key")
    c.add_argument("file")
    return p


def main(argv=None, read=input, say=print):
    args = parser().parse_args(argv)
    if args.command == "check":
        lines, ok = check_file(args.file)
        for line in lines:
            (say if ok else _err)(line)
        return 0 if ok else USAGE_ERROR
    try:
        if args.command == "ask":
            start = {}
            if os.path.exists(args.file):
                start, damage = config.read_stored(args.file)
                if start is None:
                    raise ConfigError("%s: %s; move it away to start afresh" % (
                        args.file, damage))
            cfg = Dialogue(read, say).run(start)
        else:
            cfg = settings_from_flags(args)
        write(args.file, cfg)
    except ConfigError as exc:
        _err("python -m tools.config: error: %s" % exc)
        return USAGE_ERROR
    except OSError as exc:
        _err("python -m tools.config: error: cannot write %s: %s" % (
            args.file, exc.strerror or exc))
        return USAGE_ERROR
    say("wrote %s (%s); the board reads it as /board.cfg: make deploy PORT=... CONFIG=%s"
        % (args.file, ", ".join(sorted(cfg)) or "the defaults", args.file))
    line = keys_line(cfg)
    if line:
        say("the logger's keys file (--keys) needs this line: %s" % line)
    return 0


def _err(line):
    sys.stderr.write(line + "\n")


if __name__ == "__main__":
    sys.exit(main())
