"""The `net` object of /board.cfg: WiFi station and MQTT broker settings (docs/network.md).

    from boardlib import netconfig
    netconfig.problem(net)     # None, or what is wrong, as a readable string
    netconfig.normal(net)      # every key present, defaults filled in
    netconfig.make_link(link, net, ...)   # the network link made from them (NetLink's own)

    "net": {"ssid": "club", "password": "...", "host": "192.168.1.10", "port": 1883,
            "user": "table3", "pass": "...", "tls": false, "key": "64 hex digits",
            "id": "table3"}

The network link (boardlib/mqttlink.py) is made from them here too, once, at start-up: the
board drops this module after boot (firmware.powerup.BOOT_MODULES), and the making's code
with it.

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
# The network link's first states (boardlib/netstream.py names them all).
_OFF = const(0)
_JOIN = const(1)


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
    if host.replace(".", "").isdigit():
        # the link takes a host of digits and dots for an address, and looks up nothing:
        # it must be a dotted IPv4 address
        parts = host.split(".")
        if len(parts) != 4 or any(not part or len(part) > 3 or not part.isdigit()
                                  or int(part) > 255 for part in parts):
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


def make_link(link, net, wlan, now_ms, board_id, clock, ca_path, frames, keepalive):
    """The network link made from its normal `net` settings (boardlib/mqttlink.py: NetLink
    calls this with its MQTT keep-alive, and makes its buffers itself): here, once, at start-up,
    in the module the board drops after boot (firmware.powerup.BOOT_MODULES), so that the
    making's code is not held beside the link for good."""
    import os
    from binascii import hexlify, unhexlify
    from time import ticks_ms

    from umqtt import simple

    from boardlib.framesign import FrameSigner
    from boardlib.link import Link

    link.net = net
    link.ca_path = ca_path
    link._tls = None  # the TLS context, made once
    link._gate = None
    link._ssl = None
    link.wlan = wlan
    link.clock = clock or ticks_ms
    link.id = net["id"] or hexlify(board_id).decode()
    base = "pinboard/%s/" % link.id
    link.topic_state = (base + "state").encode()
    link.topic_events = (base + "events").encode()
    link.topic_status = (base + "status").encode()
    link.topic_cmd = (base + "cmd").encode()
    link.nonce = os.urandom(8)
    id_bytes = link.id.encode()
    # Every frame the link makes is sealed (boardlib/framesign.py): counter | frame | tag.
    # The counter numbers them from 0 at boot, sent or not (a gap shows a loss). The host's
    # commands are checked by the same signer (the whole tag).
    link._signer = FrameSigner(unhexlify(net["key"]), link.nonce, id_bytes)
    link.counter = 0
    link._cmd_len = 0  # (of NetLink._cmd)
    # The hello names the board as its topics and tag do: the host binds the three. (Its
    # stream is the link itself, which has no any(): a board with the network link alone
    # serves it every few ms, as it must to connect.) `frames`: the serial Link, whose
    # buffers its frames are made in too.
    Link.__init__(link, link, now_ms, board_id=id_bytes, frames=frames)
    link.client = simple.MQTTClient(
        id_bytes, net["host"], net["port"], user=net["user"].encode() or None,
        password=net["pass"].encode() or None, keepalive=keepalive)
    link.client.set_callback(link._message)
    # with the boot's nonce: a logger that starts later proves the retained state by it
    link.client.set_last_will(link.topic_status, b"offline " + hexlify(link.nonce),
                              retain=True)
    # a name is looked up (netdns), an address is not (problem() checks both)
    link._named = not net["host"].replace(".", "").isdigit()
    link.state = _JOIN if wlan is not None else _OFF
    link._since = now_ms
    link._joining = False
    link._addr = None  # the broker's socket address, kept once known
    link._resolver = None
    link._sent = False  # LOGIN, SUBSCRIBE: the packet is sent, its answer awaited
    link._pid = 0
    link._one = bytearray(1)
    # every connection's stream buffers: made once the game is read (firmware.startapp)
    link.bufs = None
    if wlan is not None:
        # The station interface on, once: `active(True)` waits for the WiFi driver to start
        # (ports/esp32/network_wlan.c), which belongs at start-up, not in a poll. Power
        # saving off where the release can (WLAN.PM_NONE, 1.21+): with ESP-IDF's default
        # (modem sleep, WIFI_PS_MIN_MODEM) each packet to the board may wait for the next
        # DTIM beacon, 100 ms and more; the board runs from mains power.
        pm = None
        try:
            wlan.active(True)
            pm = getattr(wlan, "PM_NONE", None)
        except OSError:
            # The driver did not start: no room for it in the ESP-IDF heap (ESP_ERR_NO_MEM,
            # the GC heap having grown into it) or another failure. The game starts all the
            # same; the link's join starts the driver again, and says why it could not
            # (boardlib/netdial.py: Err 76 or 71). Before, the board stopped at the REPL.
            pass
        if pm is not None:
            try:
                wlan.config(pm=pm)
            except (OSError, ValueError, TypeError):
                pass  # a release with the constant but not the setting: the default stays
    link._raw_sock = None
    link._sock = None
    link._poller = None
    link._failures = 0
    link._wait_ms = 0
    link._pinged_at = now_ms
    link._outbox = []
    link._greeting = None  # the sealed hello, waiting for the first connection
    link._state = None  # (packed state, history) last sent: the application's buffers
    link._ring_id = bytearray(8)  # the game of the shots in NetLink._ring (link.game_id)
    link._ring_at = 0
    link._ring_len = 0
    link._last_counter = -1
    link._unreported = 0
    link._reported_at = now_ms
    link.notice = 0
    link.last_error = 0
    link.refused = 0
    link.connects = 0
    link.dropped = 0  # frames lost while the link was down or the outbox full
