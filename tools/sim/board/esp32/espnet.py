"""The twin's radio, chip side: `network`, `socket`, `tls`/`ssl` as the release played has
them, and the ESP-IDF heap that WiFi and TLS take their memory from.

    espnet.install(sys.modules, row, radio_config)   # rom.py, before the board boots

The host side (tools/sim/board/radio.py) is the club's WiFi: a DNS server and, between the
board's sockets and the broker, a shaper (latency, a small send buffer that pushes back).
The board sees loopback addresses of the radio's (the broker as 127.0.4.10, the DNS server
as 127.0.4.1); `getaddrinfo` turns each into the shaper's real port on 127.0.0.1 and
leaves every other address alone, so nothing the twin sends leaves the loopback.

What the port does, and this plays (docs/esp32.md):
- `getaddrinfo(name, port)` blocks the whole MicroPython task while lwIP asks each DNS
  server, 4 tries over 7 s (lwIP dns.c: DNS_MAX_RETRIES, the timer at 1, 1, 2, 3 s), and
  raises OSError(-202) when none answers; a `.local` name waits up to 5 s for mDNS
  (ports/esp32/modsocket.c: MDNS_QUERY_TIMEOUT_MS). A numeric address is not looked up.
- `WLAN.active(True)` waits for the driver's STA_START; a join takes a second and a half;
  `status()` says what the release's network_wlan.c says (releases.py: "status"): from
  1.22 the reason of the last failed join first, kept through `disconnect()` (there is no
  association to leave) and `connect()` until the new join ends;
  `config(pm=...)` and the PM_* constants exist from 1.21.
- TLS: the module is `ssl` (1.22) or `tls` (1.23+); `load_verify_locations` takes what the
  release takes; an SSLSocket has `recv`/`send` only from 1.25; each connection takes
  `tls_bytes` of the ESP-IDF heap, and the WiFi `wifi_bytes`, out of `idf_left` (when the
  twin plays the ESP32's heap): more than that is mbedtls's MBEDTLS_ERR_SSL_ALLOC_FAILED
  (-0x7F00) or the WiFi driver's ESP_ERR_NO_MEM, as on the board.
- Each frame a TCP connection sends or receives takes a block of the ESP-IDF heap as large
  as the frame, besides what WiFi and TLS hold (`_TcpSocket`): with none, nothing is sent
  (EAGAIN) and nothing comes in, until there is one again.
"""

import io
import json
import select as _select
import socket as _socket
import time

STA_IF = 0
AP_IF = 1
STAT_IDLE = 1000
STAT_CONNECTING = 1001
STAT_GOT_IP = 1010
STAT_NO_AP_FOUND = 201
STAT_WRONG_PASSWORD = 202
STAT_BEACON_TIMEOUT = 200
STAT_ASSOC_LEAVE = 8
JOIN_MS = 1500
STA_START_MS = 60
ALLOC_FAILED = -0x7F00  # MBEDTLS_ERR_SSL_ALLOC_FAILED
ESP_ERR_NO_MEM = 0x101
BOARD_IP = ("127.0.4.23", "255.255.255.0", "127.0.4.1", "127.0.4.1")
DNS_WAITS_MS = (1000, 1000, 2000, 3000)  # lwIP's tries at one DNS server
MDNS_MS = 5000
_POLL = 3
_CLOSE = 4
_AMPLE = 1 << 18  # an ESP-IDF heap the twin does not play: its regions' answer
_GET_FILENO = 10  # py/stream.h, MP_STREAM_GET_FILENO: the unix port's poll asks it first
_ENOMEM = 12


class Idf:
    """The ESP-IDF heap outside MicroPython's: what is left after the GC heap's growth."""

    def __init__(self, left=None):
        self.left = left  # None: not played (bytes without limit)
        self.taken = {}

    def largest(self):
        """The largest free block (None: not played); `left` is one piece here."""
        return self.left

    def regions(self):
        """`esp32.idf_heap_info`'s answer: one region of `left` bytes (not played: ample)."""
        left = _AMPLE if self.left is None else self.left
        return [(left, left, left, left)]

    def take(self, what, size):
        if self.left is not None:
            if size > self.left:
                return False
            self.left -= size
        self.taken[what] = self.taken.get(what, 0) + size
        return True

    def give(self, what, size):
        if self.left is not None:
            self.left += size
        self.taken[what] = self.taken.get(what, 0) - size


class IdfRegions:
    """The ESP-IDF heap as the regions a growing GC heap shares with WiFi and TLS
    (tools/port/idfheap, rom.py --heap-grows): each takes its blocks from them, the first
    region that fits, as heap_caps_malloc does; the GC heap may have grown into what they
    need (ESP_ERR_NO_MEM, MBEDTLS_ERR_SSL_ALLOC_FAILED)."""

    def __init__(self):
        self.taken = {}
        self._held = {}  # what -> the blocks of each take, the last last

    @property
    def left(self):
        import idfheap

        return sum(region[1] for region in idfheap.info())

    def largest(self):
        import idfheap

        return max(region[2] for region in idfheap.info())

    def regions(self):
        import idfheap

        return idfheap.info()

    def take(self, what, size):
        import idfheap

        got = []
        for part in _blocks(what, size):
            handle = idfheap.take(part)
            if handle is None:
                for handle in got:
                    idfheap.give(handle)
                return False
            got.append(handle)
        self._held.setdefault(what, []).append(got)
        self.taken[what] = self.taken.get(what, 0) + size
        return True

    def give(self, what, size):
        import idfheap

        held = self._held.get(what)
        if held:
            for handle in held.pop():
                idfheap.give(handle)
        self.taken[what] = self.taken.get(what, 0) - size


def _blocks(what, size):
    """The blocks WiFi or a TLS connection takes: WiFi its ten static receive buffers of
    1.6 KB (ESP_WIFI_STATIC_RX_BUFFER_NUM) and the rest; TLS its 16 KB record buffer in,
    4 KB out (sdkconfig.base, ASYMMETRIC_CONTENT_LEN) and its contexts."""
    parts = {"wifi": [1600] * 10, "tls": [16384, 4096]}.get(what, [])
    if sum(parts) >= size:
        return [size]
    return parts + [size - sum(parts)]


class Radio:
    """The radio's settings from the host (tools/sim/board/radio.py `chip_config`)."""

    def __init__(self, config):
        self.ssid = config["ssid"]
        self.password = config["password"]
        self.routes = config["routes"]  # "ip:port" -> the shaper's port on 127.0.0.1
        self.dns_port = config["dns_port"]
        self.dns_servers = config.get("dns_servers", 1)
        self.sndbuf = config.get("sndbuf")
        self.wifi_bytes = config.get("wifi_bytes", 0)
        self.tls_bytes = config.get("tls_bytes", 0)
        self.up = True


_state = {"radio": None, "idf": Idf(), "row": None, "wlan": None, "real_tls": None}


def install(modules, row, config_path, idf_left=None, grows=False):
    """Put the release's network modules in `modules` (sys.modules). config_path: the
    radio's JSON file, or None: no WiFi in reach (the station never joins). `grows`: the
    ESP-IDF heap is the growing GC heap's regions (IdfRegions), else `idf_left` bytes."""
    radio = None
    if config_path:
        with open(config_path) as f:
            radio = Radio(json.load(f))
    _state["radio"] = radio
    _state["row"] = row
    _state["idf"] = IdfRegions() if grows else Idf(idf_left)
    try:
        import tls as real_tls
    except ImportError:  # an interpreter without mbedtls: no TLS on this twin
        real_tls = None
    _state["real_tls"] = real_tls
    modules["network"] = _Network(row)
    modules["esp32"] = _Esp32Module()
    modules["socket"] = modules["usocket"] = _SocketModule()
    if real_tls is not None:
        if row["tls"] == "tls":
            modules["tls"] = _TlsModule(row, real_tls)
        elif row["tls"] in ("ssl", "ussl"):
            modules[row["tls"]] = _TlsModule(row, real_tls)


def hidden(row):
    """The module names the release does not have (rom.py's import hook refuses them)."""
    names = []
    if row["tls"] != "tls":
        names.append("tls")
    if row["tls"] == "ussl":
        names.append("ssl")
    if row["asyncio"] != "asyncio":
        names.append("asyncio")
    return names


def set_up(up):
    """The access point comes and goes (the host's `N 0` / `N 1`)."""
    radio = _state["radio"]
    if radio is not None:
        radio.up = bool(up)


class _Esp32Module:
    """The port's `esp32` module, the part the firmware reads: the ESP-IDF heap's data
    regions, each (total, free, largest free block, least free) (ports/esp32/modesp32.c,
    `idf_heap_info`)."""

    HEAP_DATA = 4  # MALLOC_CAP_8BIT
    HEAP_EXEC = 1  # MALLOC_CAP_EXEC

    def idf_heap_info(self, capabilities):
        return list(_state["idf"].regions()) if capabilities == self.HEAP_DATA else []


# -- network --------------------------------------------------------------------------------------


class _Network:
    STA_IF = STA_IF
    AP_IF = AP_IF
    STAT_IDLE = STAT_IDLE
    STAT_CONNECTING = STAT_CONNECTING
    STAT_GOT_IP = STAT_GOT_IP
    STAT_NO_AP_FOUND = STAT_NO_AP_FOUND
    STAT_WRONG_PASSWORD = STAT_WRONG_PASSWORD
    STAT_BEACON_TIMEOUT = STAT_BEACON_TIMEOUT
    STAT_ASSOC_FAIL = 203
    STAT_HANDSHAKE_TIMEOUT = 204

    def __init__(self, row):
        self.row = row

    def WLAN(self, if_id=STA_IF):  # noqa: N802 - the port's name
        if if_id != STA_IF:
            raise ValueError("the twin has a station interface only")
        if _state["wlan"] is None:
            _state["wlan"] = WLAN(self.row)
        return _state["wlan"]


class WLAN:
    def __init__(self, row):
        self.row = row
        if row["pm"]:
            self.PM_NONE = 0  # ESP-IDF's WIFI_PS_NONE, MIN_MODEM, MAX_MODEM
            self.PM_PERFORMANCE = 1
            self.PM_POWERSAVE = 2
        self.pm = 1  # ESP-IDF's default: modem sleep (WIFI_PS_MIN_MODEM)
        self._active = False
        self._requested = False
        self._wanted = None
        self._since = 0
        self._connected = False
        self._reason = 0
        self.joins = 0

    def active(self, flag=None):
        if flag is not None and bool(flag) != self._active:
            radio = _state["radio"]
            if flag:
                wifi = radio.wifi_bytes if radio else 0
                if not _state["idf"].take("wifi", wifi):
                    raise OSError(ESP_ERR_NO_MEM)
                time.sleep_ms(STA_START_MS)  # the port waits for STA_START
            else:
                _state["idf"].give("wifi", radio.wifi_bytes if radio else 0)
                self._connected = False
                self._requested = False
            self._active = bool(flag)
        return self._active

    def connect(self, ssid=None, key=None, bssid=None):
        if not self._active:
            raise OSError("Wifi Not Started")
        self._wanted = (ssid, key)
        self._requested = True
        self._since = time.ticks_ms()
        self._connected = False
        self.joins += 1

    def disconnect(self):
        # network_wlan.c keeps the last reason until a STA_DISCONNECTED event brings
        # another (or GOT_IP clears it); leaving an association brings ASSOC_LEAVE, but a
        # station whose join failed has none to leave: its reason (201, 202) stays, and
        # the next join's first status() still says it (1.22+).
        if self._connected:
            self._reason = STAT_ASSOC_LEAVE
        self._requested = False
        self._connected = False

    def _update(self):
        radio = _state["radio"]
        if self._connected:
            if radio is None or not radio.up:
                self._connected = False
                self._reason = STAT_BEACON_TIMEOUT  # the driver tries again by itself
                self._since = time.ticks_ms()
            return
        if not self._requested or time.ticks_diff(time.ticks_ms(), self._since) < JOIN_MS:
            return
        if radio is None or not radio.up or self._wanted[0] != radio.ssid:
            self._reason = STAT_NO_AP_FOUND
        elif self._wanted[1] != radio.password:
            self._reason = STAT_WRONG_PASSWORD
        else:
            self._connected = True
            self._reason = 0
            return
        self._since = time.ticks_ms()  # the next try of the driver

    def isconnected(self):
        self._update()
        return self._connected

    def status(self, what=None):
        if what is not None:
            raise ValueError("unknown status param")
        self._update()
        if self._connected:
            return STAT_GOT_IP
        if self.row["status"] == "reason":  # 1.22+: the last reason first, kept
            if self._reason in (STAT_NO_AP_FOUND, STAT_WRONG_PASSWORD):
                return self._reason
            if self._reason == STAT_ASSOC_LEAVE:
                return STAT_IDLE
        if self._requested:
            return STAT_CONNECTING
        return self._reason or STAT_IDLE

    def ifconfig(self, config=None):
        return BOARD_IP

    def config(self, *args, **kw):
        if "pm" in kw and self.row["pm"]:
            self.pm = kw["pm"]
            return None
        if args == ("pm",) and self.row["pm"]:
            return self.pm
        if args == ("mac",):
            return b"\x24\x0a\xc4\x00\x00\x01"
        raise ValueError("unknown config param")


# -- socket ---------------------------------------------------------------------------------------


def _route(host, port):
    radio = _state["radio"]
    if radio is None:
        return host, port
    local = radio.routes.get("%s:%d" % (host, port))
    if local is not None:
        return "127.0.0.1", local
    if not host.startswith("127."):
        raise OSError(113)  # EHOSTUNREACH: the twin's radio reaches the loopback only
    return host, port


def _numeric(host):
    parts = host.split(".")
    return len(parts) == 4 and all(p.isdigit() for p in parts)


def _lookup(name):
    """The port's blocking getaddrinfo: ask the radio's DNS, wait as lwIP waits."""
    radio = _state["radio"]
    if radio is None or not radio.up:
        raise OSError(-202)
    ask = _socket.socket(_socket.AF_INET, _socket.SOCK_DGRAM)
    try:
        where = _socket.getaddrinfo("127.0.0.1", radio.dns_port)[0][-1]
        poller = _select.poll()
        poller.register(ask, _select.POLLIN)
        waits = (MDNS_MS,) if name.endswith(".local") else DNS_WAITS_MS * radio.dns_servers
        for wait in waits:
            ask.sendto(b"Q " + name.encode(), where)
            if poller.poll(wait):
                answer = ask.recv(128).decode().split()
                if len(answer) == 2 and answer[0] == "A":
                    return answer[1]
                raise OSError(-202)  # the server says there is no such name
        raise OSError(-202)
    finally:
        ask.close()


class _SocketModule:
    """The port's socket module over the unix port's, through the radio."""

    def __init__(self):
        for name in ("AF_INET", "SOCK_STREAM", "SOCK_DGRAM", "SOCK_RAW", "SOL_SOCKET",
                     "SO_REUSEADDR", "IPPROTO_TCP", "IPPROTO_UDP", "IPPROTO_IP",
                     "TCP_NODELAY"):
            if hasattr(_socket, name):
                setattr(self, name, getattr(_socket, name))

    def socket(self, af=_socket.AF_INET, kind=_socket.SOCK_STREAM, proto=0):
        sock = _socket.socket(af, kind, proto)
        radio = _state["radio"]
        if radio is not None and radio.sndbuf and kind == _socket.SOCK_STREAM:
            sock.setsockopt(_socket.SOL_SOCKET, 7, radio.sndbuf)  # SO_SNDBUF: lwIP's is small
        if kind == _socket.SOCK_STREAM and _state["idf"].largest() is not None:
            return _TcpSocket(sock)
        return sock

    def getaddrinfo(self, host, port, af=0, kind=0, proto=0, flags=0):
        if not _numeric(host):
            host = _lookup(host)
        host, port = _route(host, port)
        return _socket.getaddrinfo(host, port)


# The WiFi driver copies each frame it sends or receives into a buffer of the ESP-IDF heap
# as large as the frame (its dynamic TX and RX buffers, CONFIG_ESP_WIFI_DYNAMIC_TX_BUFFER and
# _RX_BUFFER_NUM), and lwIP holds a segment's data in pbufs of the same heap (ESP-IDF's
# "Wi-Fi Buffer Usage": the LwIP and Wi-Fi buffers share memory with the application).
_MSS = 1436  # a segment's data at most (ESP-IDF's CONFIG_LWIP_TCP_MSS)
_FRAME_HEAD = 100  # the 802.11, IP and TCP headers and the buffer's own
# A frame that comes in is taken as a whole segment's: the twin reads a byte stream, and the
# broker's frames are as long as that (its certificate in the TLS handshake)
RX_FRAME = _MSS + _FRAME_HEAD


def _room(size):
    return _state["idf"].largest() >= size


class _TcpSocket(io.IOBase):
    """A TCP socket whose frames take the ESP-IDF heap's memory: with no free block of a
    frame's size, a write sends nothing (lwIP's ERR_MEM: EAGAIN on a non-blocking socket,
    OSError(ENOMEM) on a blocking one) and what the peer sends does not come in (the
    driver drops the frame, the peer sends it again), until a block is free. A board whose
    GC heap took all but a few hundred bytes of the ESP-IDF's has a link that passes
    nothing, as it would on the ESP32. Small, as it lives in the board's heap: the poll
    watches the socket's own file descriptor (a reader the poll wakes while no frame can
    come in finds nothing, EAGAIN)."""

    def __init__(self, real):
        self._real = real
        self._blocking = True

    def setblocking(self, flag):
        self._blocking = bool(flag)
        return self._real.setblocking(flag)

    def setsockopt(self, *args):
        return self._real.setsockopt(*args)

    def connect(self, address):
        return self._real.connect(address)

    def _starved(self, size):
        if _room(size):
            return False
        if self._blocking:
            raise OSError(_ENOMEM)
        return True

    def readinto(self, buf):
        if self._starved(RX_FRAME):
            return None
        return self._real.readinto(buf)

    def read(self, n=-1):
        if self._starved(RX_FRAME):
            return None
        return self._real.read(n)

    def write(self, buf):
        if self._starved(min(len(buf), _MSS) + _FRAME_HEAD):
            return None
        return self._real.write(buf)

    def ioctl(self, request, arg):
        if request == _GET_FILENO:
            return self._real.fileno()
        if request == _CLOSE:
            self.close()
        return 0

    def close(self):
        if self._real is not None:
            self._real.close()
            self._real = None


# -- tls / ssl ------------------------------------------------------------------------------------


class _TlsModule:
    def __init__(self, row, real):
        self.row = row
        self.real = real
        for name in ("PROTOCOL_TLS_CLIENT", "PROTOCOL_TLS_SERVER", "CERT_NONE",
                     "CERT_OPTIONAL", "CERT_REQUIRED", "MBEDTLS_VERSION"):
            if hasattr(real, name):
                setattr(self, name, getattr(real, name))

    def SSLContext(self, protocol):  # noqa: N802 - the port's name
        return _Context(self.row, self.real.SSLContext(protocol))


class _Context:
    def __init__(self, row, real):
        self._row = row
        self._real = real

    def __getattr__(self, name):
        return getattr(self._real, name)

    def __setattr__(self, name, value):
        if name.startswith("_"):
            object.__setattr__(self, name, value)
        else:
            setattr(self._real, name, value)

    def load_verify_locations(self, *args, **kw):
        form = self._row["context"]
        if form == "cadata":  # 1.23+: (cadata), positional only
            if kw or len(args) != 1:
                raise TypeError("function doesn't take keyword arguments")
            return self._real.load_verify_locations(args[0])
        if form == "cafile":  # 1.22: (cafile=None, *, cadata=None)
            if len(args) > 1 or set(kw) - {"cafile", "cadata"}:
                raise TypeError("unexpected keyword argument")
            cafile = args[0] if args else kw.get("cafile")
            if cafile is not None:
                with open(cafile, "rb") as f:  # a file name, as the port reads it
                    self._real.load_verify_locations(f.read())
            if kw.get("cadata") is not None:
                self._real.load_verify_locations(kw["cadata"])
            return None
        raise AttributeError("load_verify_locations")  # 1.21: SSLContext has none

    def set_ciphers(self, ciphers):
        if self._row["context"] in (None, "wrap"):
            raise AttributeError("set_ciphers")
        return self._real.set_ciphers(ciphers)

    def wrap_socket(self, sock, server_side=False, do_handshake_on_connect=True,
                    server_hostname=None):
        radio = _state["radio"]
        size = radio.tls_bytes if radio else 0
        if not _state["idf"].take("tls", size):
            raise OSError(ALLOC_FAILED)
        try:
            real = self._real.wrap_socket(sock, server_side=server_side,
                                          do_handshake_on_connect=do_handshake_on_connect,
                                          server_hostname=server_hostname)
        except BaseException:
            _state["idf"].give("tls", size)
            raise
        return _SSLSocket(real, size, self._row["recv"])


class _SSLSocket(io.IOBase):
    """An SSLSocket as the release has it: recv/send only from 1.25; its share of the
    ESP-IDF heap given back at close()."""

    def __init__(self, real, size, recv):
        self._real = real
        self._size = size
        self._poller = _select.poll()
        self._poller.register(real, _select.POLLIN | _select.POLLOUT)
        if recv:
            self.recv = real.recv
            self.send = real.send

    def readinto(self, buf):
        return self._real.readinto(buf)

    def read(self, n=-1):
        return self._real.read(n)

    def write(self, buf):
        return self._real.write(buf)

    def setblocking(self, flag):
        return self._real.setblocking(flag)

    def ioctl(self, request, arg):
        if request == _POLL:
            for _, events in self._poller.ipoll(0):
                return events & arg
            return 0
        if request == _CLOSE:
            self.close()
        if request == _GET_FILENO:
            return -1  # none: select.poll asks ioctl(POLL) (0 would be stdin's)
        return 0

    def close(self):
        if self._real is not None:
            try:
                self._real.close()
            finally:
                self._real = None
                _state["idf"].give("tls", self._size)


def taken():
    """What the ESP-IDF heap has lent to WiFi and TLS now, and what is left (None: not
    played)."""
    return dict(_state["idf"].taken), _state["idf"].left

