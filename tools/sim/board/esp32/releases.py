"""What each MicroPython release for the ESP32 lacks or names differently: the one table the
twin plays a release from (`--micropython`), deploy and the firmware refuse old ones by,
and docs/esp32.md prints. Runs on CPython and MicroPython.

    from tools.sim.board.esp32 import releases
    row = releases.row((1, 24, 1))      # the facts of the 1.24 line
    row["tls"], row["recv"], row["umqtt"]  # "tls", False, "1.4.0"
    releases.SUPPORTED                  # the release lines the firmware runs on

Every fact was read in micropython/micropython at the line's tag (v1.20.0 ... v1.28.0, and
main at 1c3c2011 for 1.29.0-preview), in the file the `sources` key names, and, for the
frozen umqtt, in micropython-lib at the commit the tag's lib/micropython-lib submodule
points at (micropython/umqtt.simple/manifest.py):

- asyncio: the name of the frozen asyncio package (ports/esp32/boards/manifest.py:
  `include("$(MPY_DIR)/extmod/uasyncio")` on 1.20; the `u` prefix of a frozen package is
  not stripped by py/builtinimport.c, which maps only built-in modules).
- tls: the C module of TLS (extmod/modussl_mbedtls.c `ussl` on 1.20, modssl_mbedtls.c
  `ssl` on 1.21-1.22, modtls_mbedtls.c `tls` from 1.23, with micropython-lib's `ssl` on top,
  frozen through bundle-networking).
- context: how a client context takes the CA: None (1.20: no SSLContext, only
  `ussl.wrap_socket`), "wrap" (1.21: SSLContext without `load_verify_locations` and
  `set_ciphers`: the CA only through `ssl.wrap_socket(cadata=...)`), "cafile" (1.22:
  `load_verify_locations(cafile=None, *, cadata=None)`, a positional argument is a file
  name), "cadata" (1.23+: `load_verify_locations(cadata)`, positional only).
- recv: `SSLSocket` has `recv`/`recv_into`/`send` (added in 1.25; before, only the
  stream methods read/readinto/write).
- next2: `next(iterator, default)` (MICROPY_PY_BUILTINS_NEXT2, py/mpconfig.h: at ROM level
  EVERYTHING before 1.25, BASIC_FEATURES from 1.25; the ESP32 is EXTRA_FEATURES).
- wdt_s: `machine.WDT(timeout=ms)` rounds down to whole seconds (ports/esp32/
  machine_wdt.c on 1.20: `esp_task_wdt_init(timeout / 1000)`; from 1.21 milliseconds).
- status: what `WLAN.status()` says while a join fails (ports/esp32/network_wlan.c):
  "connecting" (1.20-1.21: STAT_CONNECTING for as long as the driver keeps retrying, the
  reason never), "reason" (1.22+: the last disconnect's reason first, 201 no AP, 202 wrong
  password, kept until the next event, so that a new join may report the last one's).
- pm: `WLAN.config(pm=...)` and `WLAN.PM_NONE` (1.21+).
- umqtt: the umqtt.simple release the port freezes (require("umqtt.simple")).
- heap: the GC heap (ports/esp32/main.c, mpconfigport.h, py/gc.c): ("fixed", n) on 1.20
  (the largest free block, at most half the RAM: 111 KB on an ESP32 without PSRAM);
  ("grows", initial) from 1.21 (MICROPY_GC_SPLIT_HEAP_AUTO: 64 KB at first on 1.21, 56 KB
  from 1.22, grown from the ESP-IDF heap when full; one growth gives 111,936 bytes "with
  about 40k left for the IDF", commit f6d630877c).
- mpy_sub: the .mpy sub-version of native code (py/persistentcode.h, espsys.mpy_of).
"""

OLDEST = (1, 22, 0)  # firmware.errors.MICROPYTHON_OLDEST: the reasons are in docs/esp32.md
NEWEST = (1, 29)
ONE_GROWTH = 111936  # GC heap bytes after one growth (commit f6d630877c)
IDF_LEFT = 40 * 1024  # what the ESP-IDF heap keeps after that growth (same commit)
# The growing heap itself, on an interpreter built with `upybuild --esp32-heap`
# (tools/port/idfheap, docs/esp32.md "The heap"): the first area of 56 KB, whose pool
# gc_init makes 3,500 blocks of 16 bytes on 32 bits (the area one growth adds, 57,344 bytes
# with its tables and header, has 55,936: ONE_GROWTH in all); and the ESP-IDF's free data
# regions after boot, in address order: below the first area the two of MicroPython's
# documented `esp32.idf_heap_info(esp32.HEAP_DATA)` after booting (docs/library/esp32.rst:
# 35,712 free of 79,912, 15,036 of 15,072), above it the rest of the region it was made in,
# which the one growth takes.
FIRST_AREA = 56 * 1024
FIRST_POOL = 56000
IDF_BELOW = (35712, 15036)
IDF_ABOVE = (57344,)

_COMMON = {
    "asyncio": "asyncio", "tls": "tls", "context": "cadata", "recv": False,
    "next2": False, "wdt_s": False, "status": "reason", "pm": True,
    "heap": ("grows", 56 * 1024), "mpy_sub": 3,
}


def _row(line, changes, sources):
    row = dict(_COMMON)
    row.update(changes)
    row["line"] = line
    row["sources"] = sources
    return row


# Release lines, oldest first. The tag named is the one read; every release of the line
# (1.22.0-1.22.2, 1.24.0-1.24.1, 1.26.0-1.26.1) has the same facts.
ROWS = (
    _row((1, 20), {"asyncio": "uasyncio", "tls": "ussl", "context": None, "wdt_s": True,
                   "status": "connecting", "pm": False, "umqtt": "1.3.4",
                   "heap": ("fixed", 111 * 1024), "mpy_sub": 1},
         "v1.20.0: ports/esp32/boards/manifest.py, extmod/modussl_mbedtls.c, "
         "ports/esp32/machine_wdt.c, ports/esp32/main.c"),
    _row((1, 21), {"tls": "ssl", "context": "wrap", "status": "connecting",
                   "umqtt": "1.3.4", "heap": ("grows", 64 * 1024), "mpy_sub": 1},
         "v1.21.0: extmod/modssl_mbedtls.c, ports/esp32/network_wlan.c, ports/esp32/main.c"),
    _row((1, 22), {"tls": "ssl", "context": "cafile", "umqtt": "1.3.4", "mpy_sub": 1},
         "v1.22.0: extmod/modssl_mbedtls.c, ports/esp32/mpconfigport.h, "
         "ports/esp32/network_wlan.c"),
    _row((1, 23), {"umqtt": "1.4.0", "mpy_sub": 2},
         "v1.23.0: extmod/modtls_mbedtls.c, py/persistentcode.h, micropython-lib 50ed36fb"),
    _row((1, 24), {"umqtt": "1.4.0"},
         "v1.24.0: py/mpconfig.h, py/persistentcode.h, micropython-lib 68e3e07b"),
    _row((1, 25), {"recv": True, "next2": True, "umqtt": "1.6.0"},
         "v1.25.0: extmod/modtls_mbedtls.c, py/mpconfig.h, micropython-lib 5b496e94"),
    _row((1, 26), {"recv": True, "next2": True, "umqtt": "1.6.0"},
         "v1.26.0: micropython-lib 34c4ee16"),
    _row((1, 27), {"recv": True, "next2": True, "umqtt": "1.7.0"},
         "v1.27.0: micropython-lib 6ae440a8"),
    _row((1, 28), {"recv": True, "next2": True, "umqtt": "1.7.0"},
         "v1.28.0: micropython-lib 8380c7bb"),
    _row((1, 29), {"recv": True, "next2": True, "umqtt": "1.8.0"},
         "main 1c3c2011 (1.29.0-preview): micropython-lib ee4bb8ff"),
)

SUPPORTED = tuple(r["line"] for r in ROWS if OLDEST[:2] <= r["line"] <= NEWEST)
# One release of each supported line, the last of it: what the tests play.
LATEST = {(1, 22): (1, 22, 2), (1, 23): (1, 23, 0), (1, 24): (1, 24, 1), (1, 25): (1, 25, 0),
          (1, 26): (1, 26, 1), (1, 27): (1, 27, 0), (1, 28): (1, 28, 0),
          (1, 29): (1, 29, 0)}


# What ports/esp32/boards/manifest.py freezes on a supported line (the module paths, read
# with tools/sim/board/portfrozen.py from each tag): the same on 1.22, `ssl.py`
# (micropython-lib's, over `tls`) from 1.23, the port's own `machine.py` from 1.26.
PORT_FROZEN_122 = (
    "_boot.py", "apa106.py", "espnow.py", "flashbdev.py", "inisetup.py", "asyncio/__init__.py",
    "asyncio/core.py", "asyncio/event.py", "asyncio/funcs.py", "asyncio/lock.py",
    "asyncio/stream.py", "uasyncio.py", "requests/__init__.py", "mip/__init__.py",
    "ntptime.py", "webrepl.py", "webrepl_setup.py", "urequests.py", "aioespnow.py", "dht.py",
    "onewire.py", "ds18x20.py", "neopixel.py", "umqtt/robust.py", "umqtt/simple.py",
    "upysh.py",
)


def port_frozen(version):
    """The module paths a stock build of `version` freezes (None before 1.22)."""
    line = tuple(version[:2])
    if line < (1, 22):
        return None
    return (PORT_FROZEN_122 + (("ssl.py",) if line >= (1, 23) else ())
            + (("machine.py",) if line >= (1, 26) else ()))


def row(version):
    """The row of the release line of `version` (a tuple, (1, 24, 1) or (1, 24)); None for a
    line not in the table."""
    line = tuple(version[:2])
    for r in ROWS:
        if r["line"] == line:
            return r
    return None


def supported(version):
    return tuple(version[:2]) in SUPPORTED


def parse(text):
    """(1, 24, 1) from "1.24.1" (or "1.29.0-preview"); ValueError for anything else."""
    parts = text.split("-")[0].split(".")
    if len(parts) != 3 or not all(p.isdigit() for p in parts):
        raise ValueError("a MicroPython version is like 1.24.1, not %r" % text)
    return tuple(int(p) for p in parts)


def gc_heap(version):
    """The GC heap the firmware has on a board without PSRAM: the fixed heap, or the
    growing heap after its one growth."""
    kind, size = row(version)["heap"]
    return size if kind == "fixed" else ONE_GROWTH


def _yes(flag):
    return "yes" if flag else "no"


def markdown():
    """The table as docs/esp32.md prints it (tests/test_releases.py keeps them equal)."""
    head = ("| release | supported | asyncio | TLS module | CA into the context | "
            "`SSLSocket.recv`/`send` | `next(it, default)` | `WDT` timeout | "
            "`WLAN.status()` while a join fails | `config(pm=)` | frozen umqtt.simple | "
            "GC heap (no PSRAM) | native .mpy sub-version | read at |")
    lines = [head, "|" + "---|" * head.count(" | ") + "---|"]
    context = {None: "none (`ussl.wrap_socket` only)", "wrap": "only `ssl.wrap_socket(cadata=)`",
               "cafile": "`load_verify_locations(cadata=)`", "cadata":
               "`load_verify_locations(cadata)`"}
    status = {"connecting": "1001 (connecting) while it retries", "reason":
              "the last reason (201, 202), kept into the next join"}
    for r in ROWS:
        kind, size = r["heap"]
        heap = ("%d KB, fixed" % (size // 1024) if kind == "fixed" else
                "%d KB, grows (111,936 B after one growth)" % (size // 1024))
        cells = ["%d.%d" % r["line"], _yes(r["line"] in SUPPORTED), "`%s`" % r["asyncio"],
                 "`%s`" % r["tls"], context[r["context"]], _yes(r["recv"]), _yes(r["next2"]),
                 "whole seconds" if r["wdt_s"] else "ms", status[r["status"]],
                 _yes(r["pm"]), r["umqtt"], heap, str(r["mpy_sub"]), r["sources"]]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(markdown(), end="")
