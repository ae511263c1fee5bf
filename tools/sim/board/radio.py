"""The club's WiFi for the ESP32 twin, host side: a DNS server, and between the board's
sockets and the broker a shaper that gives the latency of a power-saving ESP32 and a
small send buffer that pushes back.

    from tools.sim.board.radio import Radio
    radio = Radio(latency_ms=150, jitter_ms=50, backpressure=True)
    radio.broker("broker.club", 1883, ("127.0.0.1", mosquitto_port))  # a name and a port
    radio.dns = "dead"                # "ok", "slow" (answers after 1.5 s) or "dead"
    twin = Twin(state_dir, radio=radio)
    radio.close()

What the board sees (tools/sim/board/esp32/espnet.py): a WiFi `ssid`/`password`, its own
address 127.0.4.23, a DNS server at 127.0.4.1, and each broker at 127.0.4.10, .11, ...
under its name; the twin's `getaddrinfo` turns those addresses into this radio's ports on
127.0.0.1. Nothing leaves the loopback.

The shaper, per TCP connection, delays every chunk by half the round trip each way
(`latency_ms` / 2 plus up to `jitter_ms` / 2, in order): a power-saving ESP32 hears the
access point only at its beacons, so a reply waits 100 ms and more (ESP-IDF programming
guide, Wi-Fi, "Station Sleep"). With `backpressure` the board's socket has a small send
buffer (SO_SNDBUF 2 KB; lwIP's TCP_SND_BUF is 5744 bytes) and the shaper takes bytes from
it only at `rate` bytes a second, stopping for `stall_ms` every second: the board's writes
meet EAGAIN, and a TLS write mbedtls has begun must be finished before anything else.
"""

import json
import os
import random
import socket
import tempfile
import threading
import time

DNS_SLOW_S = 1.5
BOARD_NET = "127.0.4."


class _Pipe:
    """One direction of a shaped connection: read, delay, write, in order."""

    def __init__(self, src, dst, shaper, upstream):
        self.src, self.dst = src, dst
        self.shaper = shaper
        self.upstream = upstream  # board -> broker: the board's send side
        self.queue = []
        self.cond = threading.Condition()
        self.closed = False
        self.last_due = 0.0
        for target in (self._read, self._write):
            threading.Thread(target=target, daemon=True).start()

    def _read(self):
        s = self.shaper
        while not self.closed:
            size = 65536
            if self.upstream and s.backpressure:
                phase = time.monotonic() % 1.0
                if phase < s.stall_ms / 1000.0:
                    time.sleep(s.stall_ms / 1000.0 - phase)  # the radio is busy
                    continue
                size = max(1, int(s.rate / 20))
            try:
                data = self.src.recv(size)
            except OSError:
                data = b""
            now = time.monotonic()
            delay = (s.latency_ms + random.random() * s.jitter_ms) / 2000.0
            with self.cond:
                self.last_due = max(self.last_due, now + delay)
                self.queue.append((self.last_due, data))
                self.cond.notify()
            if not data:
                return
            if self.upstream and s.backpressure:
                time.sleep(0.05)  # at most `rate` bytes a second

    def _write(self):
        while True:
            with self.cond:
                while not self.queue:
                    self.cond.wait()
                due, data = self.queue.pop(0)
            wait = due - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            if not data:
                self.closed = True
                for sock in (self.dst, self.src):
                    try:
                        sock.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass
                return
            try:
                self.dst.sendall(data)
            except OSError:
                self.closed = True
                return


class _Shaper:
    def __init__(self, radio, target):
        self.radio = radio
        self.target = target
        self.server = socket.socket()
        self.server.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 2048)
        self.server.bind(("127.0.0.1", 0))
        self.server.listen(8)
        self.port = self.server.getsockname()[1]
        self.connections = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def __getattr__(self, name):
        return getattr(self.radio, name)  # latency_ms, jitter_ms, backpressure, rate, ...

    def _accept(self):
        while True:
            try:
                board, _ = self.server.accept()
            except OSError:
                return
            try:
                broker = socket.create_connection(self.target, timeout=5)
                broker.settimeout(None)
            except OSError:
                board.close()  # the broker is down: the board sees its connection closed
                continue
            self.connections += 1
            _Pipe(board, broker, self, upstream=True)
            _Pipe(broker, board, self, upstream=False)

    def close(self):
        self.server.close()


class Radio:
    def __init__(self, latency_ms=0, jitter_ms=0, backpressure=False, rate=20000,
                 stall_ms=300, ssid="club", password="pinboard", dns="ok", dns_servers=2,
                 wifi_bytes=16 * 1024, tls_bytes=22 * 1024):
        self.latency_ms = latency_ms
        self.jitter_ms = jitter_ms
        self.backpressure = backpressure
        self.rate = rate
        self.stall_ms = stall_ms
        self.ssid = ssid
        self.password = password
        self.dns = dns
        self.dns_servers = dns_servers
        self.wifi_bytes = wifi_bytes  # the ESP-IDF heap the WiFi takes (docs/esp32.md)
        self.tls_bytes = tls_bytes  # and each TLS connection: 16 KB in, 4 KB out, context
        self.names = {}
        self.routes = {}
        self.shapers = []
        self.queries = 0
        self._udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self._udp.bind(("127.0.0.1", 0))
        self.dns_port = self._udp.getsockname()[1]
        self._closed = False
        threading.Thread(target=self._serve_dns, daemon=True).start()
        self._config = None

    def broker(self, name, port, target):
        """A broker the board reaches as `name` (or its address) and `port`; the traffic
        goes to `target` (host, port) through a shaper. Returns the board's address."""
        address = self.names.get(name) or BOARD_NET + str(10 + len(self.shapers))
        if name:
            self.names[name] = address  # one address, a port for each listener
        shaper = _Shaper(self, target)
        self.shapers.append(shaper)
        self.routes["%s:%d" % (address, port)] = shaper.port
        self.routes["127.0.0.1:%d" % target[1]] = shaper.port  # a board.cfg naming the real
        return address

    def chip_config(self):
        """The file the twin's chip reads (rom.py --radio)."""
        config = {"ssid": self.ssid, "password": self.password, "dns_port": self.dns_port,
                  "dns_servers": self.dns_servers, "routes": dict(self.routes),
                  "sndbuf": 2048 if self.backpressure else None,
                  "wifi_bytes": self.wifi_bytes, "tls_bytes": self.tls_bytes}
        for ip_port in ("127.0.4.1:53", "224.0.0.251:5353"):  # the DNS server, and mDNS
            config["routes"][ip_port] = self.dns_port
        if self._config is None:
            fd, self._config = tempfile.mkstemp(prefix="pinboard-radio-", suffix=".json")
            os.close(fd)
        with open(self._config, "w") as f:
            json.dump(config, f)
        return self._config

    # -- the DNS server --------------------------------------------------------------------

    def _serve_dns(self):
        while not self._closed:
            try:
                data, peer = self._udp.recvfrom(512)
            except OSError:
                return
            self.queries += 1
            if self.dns == "dead":
                continue
            threading.Thread(target=self._answer, args=(data, peer), daemon=True).start()

    def _answer(self, data, peer):
        time.sleep((self.latency_ms / 1000.0) + (DNS_SLOW_S if self.dns == "slow" else 0))
        if data.startswith(b"Q "):  # the twin's getaddrinfo asking for the port's lwIP
            name = data[2:].decode()
            ip = self.names.get(name)
            reply = ("A %s" % ip if ip else "N").encode()
        else:
            reply = _dns_answer(data, self.names)
            if reply is None:
                return
        try:
            self._udp.sendto(reply, peer)
        except OSError:
            pass

    def close(self):
        self._closed = True
        self._udp.close()
        for shaper in self.shapers:
            shaper.close()
        if self._config:
            try:
                os.remove(self._config)
            except OSError:
                pass


def _dns_answer(query, names):
    """An answer to a DNS query for an A record (RFC 1035), NXDOMAIN for unknown names."""
    if len(query) < 17 or query[2] & 0x80:
        return None
    at, labels = 12, []
    while at < len(query) and query[at]:
        size = query[at]
        labels.append(query[at + 1:at + 1 + size].decode(errors="replace"))
        at += 1 + size
    question = query[12:at + 5]
    ip = names.get(".".join(labels))
    flags = b"\x81\x80" if ip else b"\x81\x83"
    answers = b"\x00\x01" if ip else b"\x00\x00"
    head = query[:2] + flags + b"\x00\x01" + answers + b"\x00\x00\x00\x00"
    if not ip:
        return head + question
    record = (b"\xc0\x0c\x00\x01\x00\x01\x00\x00\x00\x3c\x00\x04"
              + bytes(int(p) for p in ip.split(".")))
    return head + question + record
