"""Device side of the bench's heap figures: what the firmware's modules hold, as a board
holds them (tools.bench, docs/performance.md).

    micropython tools/sim/board/heap_device.py code [net] [--frozen ROMFS]   # bytes held
    micropython tools/sim/board/heap_device.py imports BUDGET [net] [--frozen ROMFS]

Run it with the staged deployment first on MICROPYPATH (`tools.board.deploy.stage`: `.mpy` files
or sources, exactly what `make deploy` copies), so that the modules come in as the board's
do. The modules are imported in the board's order (`firmware.run.start`): the modules that
build the board (firmware.hw and what it imports for the default configuration: the
TM1637 driver, the serial link, and with `net` the network link), then those the firmware
drops once the board is built are dropped (`firmware.powerup.BOOT_MODULES`), then
`firmware.app`. Nothing is built: the figure is the code and the modules' own objects, not
the board's buffers. `machine` (and `network`) are small
stand-ins made before counting: on the board they are C.

With `--frozen`, the modules in that ROMFS image come first on the path, as the ESP32's
frozen modules do (tools/sim/board/frozenrom.py).

`code` prints `held BYTES` (gc.mem_alloc() after a collection, less the same before; with
`net`, the network stream's buffers too, which the link makes once at its first connection,
boardlib.netstream.buffers, and holds for good), the interpreter's names before and after
the count, and with `net` after the way up's modules too (`micropython.qstr_info(1)`:
tools.bench.heap.heap_device takes from them the names the firmware interned), and
`modules` (every module that came in and stays loaded: the firmware's own and umqtt; the
stand-ins, this script and its helpers are loaded before the count, so the figure holds
none of the simulator's code); with `net`, `dial BYTES`: what the link's way up
(boardlib.netdial, netlogin or netdns: the link holds one of them at a time) adds while it
connects. `imports` first takes away
every free byte beyond BUDGET
(as tools/sim/board/run.py --heap-budget does), then imports: `imported 1`, or the port's
MemoryError. That is the heap an import needs at its peak: a source compiled on the board
needs far more while it compiles than it keeps.
"""

import gc
import sys

import micropython


class _Stub:
    """Whatever the board's build-time modules read from `machine` at import."""

    def __getattr__(self, name):
        return 0

    def __call__(self, *args, **kw):
        return self


def _stub_machine():
    stub = _Stub()
    sys.modules["machine"] = stub
    sys.modules["network"] = stub


# In the board's order (firmware.run.start): the entry point main.py imports, the power-up,
# the builder (its imports come with it), then what firmware.hw.build imports for the default
# configuration: the serial link (_link), the TM1637 driver (_display), and with `net`
# settings the network link (_net) and the settings' reader (boardlib.config).
BOARD = ("firmware.run", "firmware.powerup", "firmware.hw", "boardlib.link",
         "boardlib.tm1637")
# The network link with what a TLS board keeps of TLS's code while connected (the gate the
# SSL socket reads through, boardlib.netgate) and the settings' checks (dropped with the
# boot modules).
NET = ("boardlib.mqttlink", "boardlib.netgate", "boardlib.netconfig")
# Loaded while the link connects, then dropped, one at a time: the connection
# (boardlib/netdial.py), the TLS handshake (nettls.py), the login (netlogin.py), the name's
# lookup (netdns.py).
DIAL = ("boardlib.netdial", "boardlib.nettls", "boardlib.netlogin", "boardlib.netdns")


def load(net):
    """Import what a playing board holds, in the board's order (see the module), and the
    rules module of the default game (rules_core.game imports it with the first game: a
    board holds the rules it plays)."""
    for name in BOARD + (NET if net else ()):
        __import__(name)
    sys.modules["firmware.errors"].forget(sys.modules["firmware.powerup"].BOOT_MODULES)
    __import__("firmware.app")
    from rules_core.game import _scoring
    from rules_core.settings import RULES_TABLE

    _scoring(RULES_TABLE[0][1])


_KEPT = []


def held(net):
    from tools.sim.board.heap import own_qstr_pool

    _stub_machine()
    # the pools the firmware's names go into, as large as a stock board's for its first
    # 1,260 names: counted whole, as the board's pools of 20 to 640 entries all are once
    # it has more than 620 (the firmware has more than 800)
    pool = own_qstr_pool(shared=False)
    had = set(sys.modules)
    gc.collect()
    micropython.qstr_info(1)  # the names so far (the host takes the new ones: `names`)
    before = gc.mem_alloc()
    load(net)
    if net:  # the stream's buffers, made once at the first connection and held for good
        from boardlib.netstream import buffers

        _KEPT.append(buffers())
    gc.collect()
    print("held", gc.mem_alloc() - before + pool)
    micropython.qstr_info(1)
    # every module the count took in: the firmware's alone (tests/test_boot_modules.py)
    print("modules", ",".join(sorted(set(sys.modules) - had)))
    if net:  # what a (re)connection loads on top, for a while: the largest of the way
        # up's modules, which the link holds one at a time (boardlib.mqttlink)
        from boardlib.netstream import forget

        most = 0
        for name in DIAL:
            before = gc.mem_alloc()
            __import__(name)
            gc.collect()
            most = max(most, gc.mem_alloc() - before)
            forget(name.split(".")[1])
            gc.collect()
        print("dial", most)
        micropython.qstr_info(1)  # with the names of the way up's modules


def imports(budget, net):
    _stub_machine()
    from tools.sim.board.heap import own_qstr_pool, pin

    ballast = pin(budget - own_qstr_pool(shared=False))
    load(net)
    print("imported", len(ballast) > 0)


def tls_objects():
    """What a TLS connection keeps in MicroPython's own heap on the ESP32: the SSLContext
    object and the SSL socket object, whose structs hold mbedtls's contexts
    (extmod/modtls_mbedtls.c), and the cipher list set_ciphers makes. What mbedtls itself
    allocates (the record buffers, 16 KB in and 4 KB out, the parsed certificate, the
    handshake's state) comes from the ESP-IDF's heap there (the IDF's mbedtls), and from
    the C heap in the unix port's standard build, but from this port's heap in a build
    whose Mbed TLS has MBEDTLS_PLATFORM_STD_CALLOC m_tracked_calloc (the coverage
    build's): so each object is measured on its own, the context before a certificate is
    loaded and the socket after close() has freed what mbedtls took. Prints `context`,
    `socket`, `held`."""
    import socket

    import tls

    gc.collect()
    base = gc.mem_alloc()
    context = tls.SSLContext(tls.PROTOCOL_TLS_CLIENT)
    context.verify_mode = tls.CERT_NONE
    try:  # the one suite the network link offers (boardlib.nettls.CIPHER)
        context.set_ciphers(["TLS-ECDHE-ECDSA-WITH-AES-128-GCM-SHA256"])
    except (ValueError, AttributeError):
        pass
    gc.collect()
    held = gc.mem_alloc() - base
    print("context", held)
    sock = socket.socket()
    gc.collect()
    base = gc.mem_alloc()
    wrapped = context.wrap_socket(sock, server_hostname="club", do_handshake_on_connect=False)
    wrapped.close()
    gc.collect()
    print("socket", gc.mem_alloc() - base)
    print("held", held + gc.mem_alloc() - base)
    return context, wrapped


def main(argv):
    if "--frozen" in argv:
        at = argv.index("--frozen")
        from tools.sim.board.frozenrom import mount_frozen

        mount_frozen(argv[at + 1])
        argv = argv[:at] + argv[at + 2:]
    if not argv:
        raise SystemExit("usage: heap_device.py code [net] | imports BUDGET [net] | tlsobjects")
    if argv[0] == "code":
        held(argv[1:] == ["net"])
    elif argv[0] == "imports":
        imports(int(argv[1]), argv[2:] == ["net"])
    elif argv[0] == "tlsobjects":
        tls_objects()
    else:
        raise SystemExit("unknown mode %s" % argv[0])


main(sys.argv[1:])
