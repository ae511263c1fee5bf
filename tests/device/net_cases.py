"""The network link's device-side parts: HMAC-SHA256, the `net` settings on flash, the
link's error codes, and an idle connected poll that allocates nothing.

Run by tests/test_net_units.py (both interpreters) and tests/test_mqtt.py (the unix port,
against a real broker).
"""

import hashlib

from boardlib.config import defaults, load_config, save_config
from boardlib.hmac256 import hmac_sha256, same
from device.support import check, micropython_only, scratch_dir

HEAPSIZE = "2M"


def hmac_hex(cases):
    """[[key bytes as a list, message bytes as a list], ...] -> the HMAC-SHA256s in hex."""
    out = []
    for key, message in cases:
        tag = hmac_sha256(bytes(key), bytes(message))
        out.append("".join("%02x" % b for b in tag))
    return out


def hash_modules():
    """(hashlib has sha256, an hmac module exists) on this interpreter."""
    try:
        import hmac  # noqa: F401

        has_hmac = True
    except ImportError:
        has_hmac = False
    return [hasattr(hashlib, "sha256"), has_hmac]


def case_same_compares_whole():
    check(same(b"abc", b"abc"), "equal")
    check(not same(b"abc", b"abd"), "last byte")
    check(not same(b"xbc", b"abc"), "first byte")
    check(not same(b"ab", b"abc"), "length")


def case_net_settings_round_trip_on_flash():
    root = scratch_dir()
    cfg = defaults()
    cfg["net"] = {"ssid": "club", "password": "pw", "host": "127.0.0.1", "user": "t1",
                  "key": "ab" * 32, "id": "t1"}
    save_config(root + "/board.cfg", cfg)
    loaded, error = load_config(root + "/board.cfg")
    check(error == 0, "error %r" % error)
    net = loaded["net"]
    check(net["port"] == 1883 and net["tls"] is False and net["pass"] == "", "defaults")
    check(net["key"] == "ab" * 32 and net["id"] == "t1", "values")


def case_a_note_without_room_leaves_the_board_to_say_so():
    """The game did not fit beside the link and the heap has not even the buffer of the
    file that would start the board without it (littlefs takes one at open): start_without
    returns, and the power-up shows Err 93 (firmware/powerup.py), instead of raising."""
    micropython_only("the power-up's soft reset")
    from firmware import powerup

    def no_room(*args):
        raise MemoryError("memory allocation failed, allocating 252 bytes")

    powerup.open = no_room  # the module's own name comes before the built-in
    try:
        powerup.start_without(93, no_room=scratch_dir() + "/net.noroom")
    finally:
        del powerup.open


def bytes_per_idle_poll(link, polls):
    """What one poll of a connected, idle link allocates, over `polls` polls after 20 to
    settle (unix port: gc.mem_alloc)."""
    import gc
    import time

    now = time.ticks_ms()
    for _ in range(20):
        link.poll(now)
    gc.collect()
    before = gc.mem_alloc()
    for _ in range(polls):
        link.poll(now)
    return (gc.mem_alloc() - before) // polls


def _connected(port, user, password):
    """A network link connected to the broker on `port`, its outbox sent."""
    import time

    from boardlib import mqttlink, netstream
    from tools.sim.board import netstate
    from tools.sim.board.wlan import FakeWLAN

    net = {"ssid": "club", "password": "pinboard", "host": "127.0.0.1", "port": port,
           "user": user, "pass": password, "tls": False, "key": "00" * 16, "id": user}
    link = mqttlink.NetLink(net, FakeWLAN(time.ticks_ms), time.ticks_ms())
    for _ in range(500):
        link.poll(time.ticks_ms())
        if link.state == netstream.UP and not link._outbox:
            break
        time.sleep_ms(10)
    check(link.state == netstream.UP, "connected: %s" % netstate.NAMES[link.state])
    return link


def idle_poll_alloc(port, user, password):
    """Bytes allocated by one idle poll of a link connected to the broker on `port`."""
    micropython_only("gc.mem_alloc and umqtt")
    return bytes_per_idle_poll(_connected(port, user, password), 1000)


def connected_attributes(port, user, password):
    """How many attributes a network link holds once connected and idle (MicroPython keeps
    them in a table it grows only when it is full: tests/test_mqtt.py)."""
    micropython_only("umqtt")
    return len(_connected(port, user, password).__dict__)


def connect_without_room(port, user, password):
    """A link whose way up finds no room (the connection's objects raise MemoryError, as
    on a board whose heap is in pieces) for its first three attempts, then connects; then
    loses the connection and makes it again. Returns [the errors the failed attempts
    reported, the link's state after them, connected in the end, each connection's stream
    on the buffers the link made once]."""
    micropython_only("umqtt")
    import time

    from boardlib import mqttlink, netdial, netstream
    from tools.sim.board.wlan import FakeWLAN

    net = {"ssid": "club", "password": "pinboard", "host": "127.0.0.1", "port": port,
           "user": user, "pass": password, "tls": False, "key": "00" * 16, "id": user}
    link = mqttlink.NetLink(net, FakeWLAN(time.ticks_ms), time.ticks_ms())
    real = netdial.Stream
    left = [3]
    errors = []

    def no_room(*args, **kw):
        if left[0]:
            left[0] -= 1
            raise MemoryError("memory allocation failed, allocating 1024 bytes")
        return real(*args, **kw)

    netdial.Stream = no_room
    on_buffers = []
    try:
        deadline = time.ticks_add(time.ticks_ms(), 30000)
        states = []
        while link.state != netstream.UP and time.ticks_diff(deadline, time.ticks_ms()) > 0:
            link.poll(time.ticks_ms())  # the MemoryError never comes out of a poll
            code = link.take_notice()
            if code:
                errors.append(code)
                states.append(link.state)
            time.sleep_ms(10)
        on_buffers.append(link._sock is not None and link._sock.tx is link.bufs[0])
        link._drop(time.ticks_ms(), 0)  # the connection is lost: it is made again
        deadline = time.ticks_add(time.ticks_ms(), 30000)
        while link.state != netstream.UP and time.ticks_diff(deadline, time.ticks_ms()) > 0:
            link.poll(time.ticks_ms())
            time.sleep_ms(10)
        sock = link._sock
        on_buffers.append(sock is not None and sock.tx is link.bufs[0]
                          and sock.rx is link.bufs[1])
    finally:
        netdial.Stream = real
    return [errors, sorted(set(states)), link.state == netstream.UP, on_buffers]


def look_up_without_room(port, user, password):
    """A link whose broker is a name, its lookup failing twice: first with no room for the
    resolver (MemoryError, as on a board whose heap is in pieces), then with the DNS
    server's refusal (OSError); the third lookup answers 127.0.0.1 and the link connects.
    Returns [the errors the failed lookups reported, the resolver's module left loaded
    after each, connected in the end]."""
    micropython_only("umqtt")
    import sys
    import time

    from boardlib import mqttlink, netstream
    from tools.sim.board.wlan import FakeWLAN

    net = {"ssid": "club", "password": "pinboard", "host": "broker.club", "port": port,
           "user": user, "pass": password, "tls": False, "key": "00" * 16, "id": user}
    link = mqttlink.NetLink(net, FakeWLAN(time.ticks_ms), time.ticks_ms())
    failures = [MemoryError("memory allocation failed, allocating 512 bytes"),
                OSError(2)]  # (NXDOMAIN: boardlib/netdns.py)

    class Resolver:  # in the place of boardlib.netdns's, loaded by the link for a lookup
        def start(self, host, server, now_ms, buf=None):
            self.failure = failures.pop(0) if failures else None
            if isinstance(self.failure, MemoryError):
                raise self.failure  # (the resolver's socket and buffer found no room)

        def step(self, now_ms):
            if self.failure is not None:
                raise self.failure
            return "127.0.0.1"

        def close(self):
            pass

    class Module:
        pass

    errors, left = [], []
    deadline = time.ticks_add(time.ticks_ms(), 30000)
    while link.state != netstream.UP and time.ticks_diff(deadline, time.ticks_ms()) > 0:
        if "boardlib.netdns" not in sys.modules:
            fake = Module()
            fake.Resolver = Resolver
            sys.modules["boardlib.netdns"] = fake
        link.poll(time.ticks_ms())
        code = link.take_notice()
        if code:
            errors.append(code)
            left.append("boardlib.netdns" in sys.modules)
            link._since = time.ticks_add(time.ticks_ms(), -60000)  # the back-off is over
        time.sleep_ms(10)
    return [errors, left, link.state == netstream.UP]


def wifi_driver_without_room(port, user, password):
    """A board whose WiFi driver does not start: `WLAN.active(True)` raises ESP-IDF's
    ESP_ERR_NO_MEM at power-up and at the first join, then another OSError, then starts.
    Returns [the errors the link reported, connected in the end]."""
    micropython_only("umqtt")
    import time

    from boardlib import mqttlink
    from tools.sim.board.wlan import FakeWLAN

    class NoRoomWLAN(FakeWLAN):
        failures = [OSError(0x101), OSError(0x101), OSError(5)]

        def active(self, flag=None):
            if flag and self.failures:
                raise self.failures.pop(0)
            return FakeWLAN.active(self, flag)

    net = {"ssid": "club", "password": "pinboard", "host": "127.0.0.1", "port": port,
           "user": user, "pass": password, "tls": False, "key": "00" * 16, "id": user}
    link = mqttlink.NetLink(net, NoRoomWLAN(time.ticks_ms), time.ticks_ms())
    errors = []

    def noticed(code):
        errors.append(code)
        link._since = time.ticks_add(time.ticks_ms(), -60000)  # the back-off is over

    return [errors, _until_up(link, 30000, noticed)]


def _until_up(link, ms, noticed):
    """Poll `link` every 10 ms until it is up or `ms` have passed, handing `noticed` each
    error code it shows; True when it came up."""
    import time

    from boardlib import netstream

    deadline = time.ticks_add(time.ticks_ms(), ms)
    while link.state != netstream.UP and time.ticks_diff(deadline, time.ticks_ms()) > 0:
        link.poll(time.ticks_ms())
        code = link.take_notice()
        if code:
            noticed(code)
        time.sleep_ms(10)
    return link.state == netstream.UP


def cut_journal(image, keep):
    """Cut the game's journal on a simulated board's flash (`image`, a --state folder's
    flash.img) to its first `keep` events, in both copies: a board that comes back from a
    restart with fewer events than it had sent."""
    micropython_only("the flash image is littlefs, mounted by the unix port")
    import os

    from tools.sim.board.flash import FileBlockDev, mount

    bdev = FileBlockDev(image)
    mount(bdev, "/cut", format_blank=False)
    kept = []
    try:
        for copy in ("a", "b"):
            path = "/cut/game/%s/game.jrn" % copy
            with open(path, "rb") as f:
                data = f.read()
            at, count = 12, 0  # after the header: magic, generation, CRC
            while count < keep and at < len(data):
                at += 1 + data[at] + 4  # length byte, record, CRC-32
                count += 1
            with open(path, "wb") as f:
                f.write(data[:at])
            kept.append(count)
    finally:
        os.umount("/cut")
        bdev.close()
    return kept


def _tls_link(port, ca_file, user, password):
    """A NetLink with `"tls": true` for the broker's TLS listener on `port`, the CA
    certificate `ca_file` (None: none) copied to a little flash as the board's ca.der."""
    import time

    from boardlib import mqttlink
    from tools.sim.board.flash import RamBlockDev, mount
    from tools.sim.board.wlan import FakeWLAN

    mount(RamBlockDev(blocks=16), "/board")  # a little flash: the heap is 2 MB
    if ca_file is not None:
        with open(ca_file, "rb") as f, open("/board/ca.der", "wb") as g:
            g.write(f.read())
    net = {"ssid": "club", "password": "pinboard", "host": "127.0.0.1", "port": port,
           "user": user, "pass": password, "tls": True, "key": "00" * 16, "id": user}
    link = mqttlink.NetLink(net, FakeWLAN(time.ticks_ms), time.ticks_ms(),
                            ca_path="/board/ca.der")
    # the settings' module, which made the link, goes with the boot's modules on a board
    # (firmware.powerup.BOOT_MODULES)
    mqttlink.forget("netconfig")
    return link


def tls_connect(port, ca_file, user, password):
    """A link with `"tls": true` against the broker's TLS listener on `port`, checking its
    certificate against the CA certificate `ca_file` (None: none), copied to the board's
    flash as ca.der: [where the link ended, its last error code, connections made, polls
    spent in the handshake, TLS records mbedtls read whole in them, the most it read in one
    poll, bytes an idle poll allocates once connected (None: not connected), the most
    modules of the way up (netdial, nettls, netlogin) loaded at once after a poll, the
    link's modules loaded once connected]."""
    micropython_only("umqtt and the tls module")
    import sys
    import time

    from boardlib import netstream
    from tools.sim.board import netstate

    link = _tls_link(port, ca_file, user, password)
    handshake_polls = records = most_in_a_poll = most_ways = 0
    ways = ("boardlib.netdial", "boardlib.nettls", "boardlib.netlogin")
    for _ in range(1500):
        gate = link._gate
        before = link.state
        read_before = gate.records if gate is not None else 0
        link.poll(time.ticks_ms())
        if gate is None:
            gate = link._gate  # made in this poll, as the TCP connection opened
        if before == netstream.HANDSHAKE or link.state == netstream.HANDSHAKE:
            handshake_polls += 1
            if gate is not None:
                read = gate.records - read_before  # the broker's records read whole
                records += read
                most_in_a_poll = max(most_in_a_poll, read)
        most_ways = max(most_ways, len([name for name in ways if name in sys.modules]))
        if (link.state == netstream.UP and not link._outbox) or link.last_error:
            break
        time.sleep_ms(10)
    idle = None
    if link.state == netstream.UP:
        idle = bytes_per_idle_poll(link, 500)
    held = sorted(name for name in sys.modules if name.startswith("boardlib.net"))
    return [netstate.NAMES[link.state], link.last_error, link.connects,
            handshake_polls, records, most_in_a_poll, idle, most_ways, held]


def tls_handshake_without_room(port, ca_file, user, password):
    """A TLS link whose handshake's module (boardlib/nettls.py) finds no room to load for
    its first two attempts (MemoryError, as on a board whose heap is in pieces), then
    loads: [the errors the failed attempts reported, whether each left its TCP connection
    open, where the link ended]."""
    micropython_only("umqtt and the tls module")
    import builtins

    from boardlib import mqttlink

    link = _tls_link(port, ca_file, user, password)
    left = [2]

    def no_room(name, *args):
        if name == "boardlib.nettls" and left[0]:
            left[0] -= 1
            raise MemoryError("memory allocation failed, allocating 192 bytes")
        return builtins.__import__(name, *args)

    mqttlink.__import__ = no_room  # the link's own import of its way up's modules
    errors, left_open = [], []

    def noticed(code):
        errors.append(code)
        left_open.append(link._raw_sock is not None)

    try:
        up = _until_up(link, 60000, noticed)
    finally:
        del mqttlink.__import__
    return [errors, left_open, up]


def tls_handshake_unanswered(ca_file, largest):
    """A TLS link whose broker takes the TCP connection and never answers the ClientHello,
    played on a clock of its own (a poll every 250 ms): the code the link reports when the
    handshake's time is up, with the ESP-IDF heap's largest free block `largest` (an
    `esp32` module of that answer; None: no `esp32` module, not an ESP32)."""
    micropython_only("umqtt and the tls module")
    import socket
    import sys
    import time

    server = socket.socket()
    for port in range(40000 + time.ticks_ms() % 10000, 65536):  # the port has no getsockname
        try:
            server.bind(socket.getaddrinfo("127.0.0.1", port)[0][-1])
            break
        except OSError:
            continue
    server.listen(1)

    class Esp32:  # ports/esp32/modesp32.c: (total, free, largest free block, least free)
        HEAP_DATA = 4

        def idf_heap_info(self, capabilities):
            return [(35712, largest, largest, largest), (15036, 0, 0, 0)]

    if largest is not None:
        sys.modules["esp32"] = Esp32()
    now = [time.ticks_ms()]
    link = _tls_link(port, ca_file, "t1", "t1-pw")
    link.wlan.clock = link.clock = lambda: now[0]
    code = 0
    try:
        for _ in range(200):
            link.poll(now[0])
            code = link.take_notice()
            if code:
                break
            time.sleep_ms(5)  # the ClientHello goes, and nothing comes back
            now[0] = time.ticks_add(now[0], 250)
    finally:
        sys.modules.pop("esp32", None)
        for sock in (link._ssl, link._raw_sock):
            if sock is not None:
                sock.close()
        server.close()
    return code


def case_tls_gate_completes_one_record_a_poll():
    # The broker's handshake records through the link's gate, over a loopback TCP
    # connection: a record that arrives in pieces ends the poll it is completed in, and
    # an empty record counts as read; a poll allows a record, then reads until none waits.
    micropython_only("MicroPython's socket streams (readinto without recv_into)")
    import socket
    import time

    from boardlib import netgate

    server = socket.socket()
    for port in range(40000 + time.ticks_ms() % 10000, 65536):  # the port has no getsockname
        address = socket.getaddrinfo("127.0.0.1", port)[0][-1]
        try:
            server.bind(address)
            break
        except OSError:
            continue
    server.listen(1)
    broker = socket.socket()
    broker.connect(address)
    board, _ = server.accept()
    board.setblocking(False)
    gate = netgate.Gate(board)
    buf = bytearray(64)

    def poll():
        time.sleep_ms(20)  # what the broker sent has arrived
        before = gate.records
        gate.allowed = True  # as the handshake's poll does (boardlib/nettls.py)
        while gate.readinto(buf):
            pass
        return gate.records - before

    def record(kind, body):
        return bytes([kind, 3, 3, len(body) >> 8, len(body) & 255]) + body

    hello, done = record(22, b"h" * 40), record(22, b"d" * 4)
    broker.send(hello[:12])  # a header and part of the body
    check(poll() == 0, "a record in pieces is not read whole yet")
    broker.send(hello[12:] + done + record(22, b""))
    check(poll() == 1, "its rest completes it, and the poll ends there")
    check(poll() == 1, "the next record, in the next poll")
    check(poll() == 1, "an empty record is read whole at its header")
    broker.send(record(20, b"\x01") + record(22, b"f" * 8))
    check(poll() == 1 and gate.cipher_changed and not gate.finished, "ChangeCipherSpec")
    check(poll() == 1 and gate.finished, "the broker's Finished ends the handshake")
    check(gate.records == 5, "records %d" % gate.records)
    for s in (board, broker, server):
        s.close()


def tls_backpressure(port, ca_file, packets, size):
    """Write `packets` numbered packets of `size` bytes through netstream.Stream over TLS to a
    server on `port` that does not read for a while: [times the socket pushed back, packets
    written, bytes still queued]. What the server reads must be every packet, in
    order: mbedtls finishes a record it began only when given the same length again."""
    micropython_only("the tls module and MicroPython's socket streams")
    import socket
    import time

    from boardlib import netstream, nettls

    with open(ca_file, "rb") as f:
        context = nettls.context(f.read(), nettls.CIPHER)
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, 7, 2048)  # SO_SNDBUF: a small one, as lwIP's
    sock.connect(socket.getaddrinfo("127.0.0.1", port)[0][-1])
    ssl = context.wrap_socket(sock, server_hostname="127.0.0.1")  # the handshake, blocking
    sock.setblocking(False)
    stream = netstream.Stream(ssl, time.ticks_ms, tls=True)
    pushed_back = written = 0
    deadline = time.ticks_add(time.ticks_ms(), 20000)
    while (written < packets or stream.tx_len) and time.ticks_diff(deadline,
                                                                      time.ticks_ms()) > 0:
        # as the link polls: a packet queued (a publish, a PINGREQ), then a flush
        if written < packets and stream.room() >= size:
            stream.write(b"%06d" % written + b"." * (size - 6))
            written += 1
        before = stream.tx_len
        stream.flush()
        if before and stream.tx_len == before:  # nothing taken: the socket pushed back
            pushed_back += 1
            time.sleep_ms(2)
    ssl.close()
    return [pushed_back, written, stream.tx_len]


def resolve(names, port):
    """netdns.Resolver against a DNS server on 127.0.0.1:`port`: for each name, the
    address it found, or the errno it failed with."""
    micropython_only("MicroPython's sockets (the resolver is the board's)")
    import time

    from boardlib import netdns

    out = []
    for name in names:
        resolver = netdns.Resolver()
        resolver.start(name, "127.0.0.1", time.ticks_ms(), port=port)
        found = None
        while found is None:
            try:
                found = resolver.step(time.ticks_ms())
            except OSError as exc:
                found = exc.args[0]
            time.sleep_ms(5)
        out.append(found)
    return out


def case_a_message_read_is_copied_once():
    """Stream.read(n) gives umqtt the n bytes as one bytes object and moves what follows
    down in place: a message of 250 bytes asks the heap for its own bytes and a few views,
    not for two copies more (a board at its heap's margin found no room for the second:
    docs/performance.md, "A message's read without copies")."""
    micropython_only("gc.mem_alloc, and a stream made of a Python object")
    import gc
    import io
    import time

    from boardlib import netstream

    class Wire(io.IOBase):
        def __init__(self, data):
            self.data = data

        def readinto(self, buf):
            n = min(len(buf), len(self.data))
            if not n:
                return None
            buf[:n] = self.data[:n]
            self.data = self.data[n:]
            return n

        def write(self, buf):
            return len(buf)

        def ioctl(self, request, arg):
            return -1 if request == 10 else 0  # no file descriptor: polled by ioctl

    message = bytes(i % 251 for i in range(250))
    after = b"\x30\x02ab"
    stream = netstream.Stream(Wire(message + after), time.ticks_ms)
    while stream._fill():  # all of it arrived before umqtt reads it
        pass
    gc.collect()
    gc.disable()
    try:
        before = gc.mem_alloc()
        got = stream.read(len(message))
        used = gc.mem_alloc() - before
    finally:
        gc.enable()
    check(got == message, "the message as sent")
    check(stream.read(len(after)) == after, "what followed it, moved down: %r" % stream.rx[:8])
    check(stream.rx_len == 0, "nothing more")
    check(used < 2 * len(message), "the read asked for %d bytes for %d" % (used, len(message)))
