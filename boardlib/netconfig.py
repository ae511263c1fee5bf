"""The `net` object of /board.cfg: WiFi station and MQTT broker settings (docs/network.md).

    from boardlib import netconfig
    netconfig.problem(net)     # None, or what is wrong, as a readable string
    netconfig.normal(net)      # every key present, defaults filled in

    "net": {"ssid": "club", "password": "...", "host": "192.168.1.10", "port": 1883,
            "user": "table3", "pass": "...", "tls": false, "key": "64 hex digits",
            "id": "table3"}

Without a `net` object the board has no network, as before. `key` is the board's command
key (16 to 64 bytes, as hex): commands that come over the network must carry its HMAC.
`id` names the board's topics (pinboard/<id>/...); absent, the board's unique id in hex.
"""

try:
    from micropython import const
except ImportError:  # CPython: the value itself
    const = lambda value: value

# Folded into the code (no names kept: the board drops this module after its checks at boot,
# and keeps the names it interned for good).
_TEXT = const((("ssid", 1, 32), ("password", 0, 64), ("host", 1, 64), ("user", 0, 64),
               ("pass", 0, 64), ("id", 1, 32)))
_KEYS = const(("ssid", "password", "host", "port", "user", "pass", "tls", "key", "id"))
_ID_CHARS = const("abcdefghijklmnopqrstuvwxyz0123456789-_")
_HEX = const("0123456789abcdef")


def problem(net):
    """What is wrong with a `net` object, or None."""
    if not isinstance(net, dict):
        return "net must be an object"
    for key in net:
        if key not in _KEYS:
            return "net: unknown key %s" % key
    for key in ("ssid", "host", "key"):
        if key not in net:
            return "net.%s is missing" % key
    for key, shortest, longest in _TEXT:
        if key in net:
            value = net[key]
            if not isinstance(value, str) or not shortest <= len(value) <= longest:
                return "net.%s must be text of %d-%d characters" % (key, shortest, longest)
    host = net["host"]
    if host.replace(".", "").isdigit() and not is_address(host):
        # the link takes a host of digits and dots for an address, and looks up nothing
        return "net.host: %s is not an IPv4 address" % host
    if "id" in net:
        for ch in net["id"]:
            if ch not in _ID_CHARS:
                return "net.id may hold only a-z, 0-9, - and _"
    port = net.get("port", 1883)
    if not isinstance(port, int) or isinstance(port, bool) or not 1 <= port <= 65535:
        return "net.port must be 1-65535"
    if net.get("tls", False) not in (True, False) or not isinstance(net.get("tls", False), bool):
        return "net.tls must be true or false"
    key = net["key"]
    if (not isinstance(key, str) or len(key) % 2 or not 32 <= len(key) <= 128
            or any(ch not in _HEX for ch in key.lower())):
        return "net.key must be 32-128 hex digits (a 16-64 byte key)"
    return None


def is_address(host):
    """True for a dotted IPv4 address (looked up by nobody)."""
    parts = host.split(".")
    if len(parts) != 4:
        return False
    for part in parts:
        if not part or len(part) > 3 or not part.isdigit() or int(part) > 255:
            return False
    return True


def normal(net):
    """The `net` object with every key present (call only when problem(net) is None)."""
    tls = net.get("tls", False)
    return {"ssid": net["ssid"], "password": net.get("password", ""), "host": net["host"],
            "port": net.get("port", 8883 if tls else 1883), "user": net.get("user", ""),
            "pass": net.get("pass", ""), "tls": tls, "key": net["key"].lower(),
            "id": net.get("id", "")}


def dumps_items(net):
    """The normal object's keys in a fixed order, for config.dumps."""
    net = normal(net)
    return [(key, net[key]) for key in _KEYS]
