"""The networked board on every supported MicroPython release, on the ESP32 twin, through a
WiFi as slow as a power-saving ESP32's (docs/esp32.md, "Releases" and "The radio").

Each release line's board (tools/sim/board/esp32/releases.py: the last release of each
supported line) boots the firmware as `make deploy` leaves it, joins the club's WiFi, looks
the broker up by name (broker.club) and connects through a shaper giving 150 ms of round
trip with 50 ms of jitter and a send buffer that pushes back; it plays two shots over
plain MQTT, is then given TLS settings and the club's CA, plays two more over TLS, and the
logger stores the whole game, each shot once. The boards play side by side, so that the
module takes about as long as one board. Each runs its release's own interpreter where
../shared/upy (or PINBOARD_UPY_DIR) has it (the TLS half on the pinned one where that
interpreter has no mbedtls), and finds its release's frozen umqtt when
tools/sim/board/portfrozen.py has made the release's frozen modules (else umqtt 1.3.4 of
`make venv`, said in the test's output).

Also here: a broker name whose DNS never answers (the board must neither block nor starve
its watchdog), an access point that comes up after the board (the reason the last join
failed is still reported when the next one begins), releases the firmware refuses at
boot, the ESP-IDF heap too small for a TLS connection, and the board on the GC heap of a
stock ESP32 (on a 32-bit interpreter: plain MQTT, and over TLS where one has the `tls`
module).
"""

import inspect
import json
import os
import shutil
import subprocess
import sys
import threading
import time

import paho.mqtt.client as paho
import pytest
from twin_helpers import booted, flash, play_shot, scores_shown

from tools.bench import harness
from tools.board import broker as broker_tool
from tools.logger import Logger
from tools.logger.mqtt import MqttSource
from tools.port import upy
from tools.sim.board.esp32 import espnet, releases
from tools.sim.board.radio import Radio
from tools.sim.board.twin import port_modules_place

pytestmark = [
    pytest.mark.skipif(broker_tool.available() is not None, reason=str(broker_tool.available())),
    pytest.mark.skipif(shutil.which("openssl") is None,
                       reason="openssl is not installed (.ci/run installs it)"),
    # a dozen twins at once on a slow radio: with the real-time modules, one at a time
    pytest.mark.realtime, pytest.mark.long(70),
]

FLASHFS = upy.entry("flashfs")
LINES = releases.SUPPORTED
BOARDS = tuple("v%d-%d" % line for line in LINES) + ("dns", "old", "mem", "late", "heap-src",
                                                       "heap-mpy", "heap-120", "heap-tls",
                                                       "again", "again-tls", "short-tls",
                                                       "grow-tls", "grow-again-tls",
                                                       "grow-src", "grow-again-mqtt") \
    + tuple("heap-%d-%d" % line for line in LINES)
USERS = {"logger": "logger-pw", **{b: b + "-pw" for b in BOARDS}}
KEYS = {b: bytes(range(i, i + 32)) for i, b in enumerate(BOARDS)}
BROKER_NAME = "broker.club"
PLAIN, SECURE = 1883, 8883  # the ports the boards are given


@pytest.fixture(scope="module")
def club(tmp_path_factory):
    """The broker (plain and TLS listeners, its certificate for broker.club), a logger
    storing every board, and a watcher of the boards' status topics."""
    tmp = tmp_path_factory.mktemp("club")
    certs = tmp / "certs"
    certs.mkdir()
    broker_tool.make_certificates(str(certs), address=BROKER_NAME)
    tls_port = broker_tool.free_port()
    with broker_tool.Mosquitto(str(tmp / "broker"), USERS, BOARDS,
                               extra=broker_tool.tls_listener_text(str(certs), tls_port)) as b:
        b.tls_port, b.ca = tls_port, certs / "ca.der"
        source = MqttSource("mqtt://logger:%s@127.0.0.1:%d" % (USERS["logger"], b.port),
                            keys=KEYS)
        b.logger = Logger([], str(tmp / "games.db"), mqtt=source)
        thread = threading.Thread(target=b.logger.run_forever, daemon=True)
        thread.start()
        b.online = []
        watcher = paho.Client(paho.CallbackAPIVersion.VERSION2)
        watcher.username_pw_set("logger", USERS["logger"])
        watcher.on_connect = lambda c, u, f, r, p: c.subscribe("pinboard/+/status")
        watcher.on_message = lambda c, u, m: m.payload.startswith(b"online") and \
            b.online.append(m.topic.split("/")[1])
        watcher.connect("127.0.0.1", b.port)
        watcher.loop_start()
        b.db = tmp / "games.db"
        try:
            yield b
        finally:
            watcher.loop_stop()
            watcher.disconnect()
            b.logger.stop()
            thread.join(10)
            b.logger.close()


def _radio(club, **kw):
    radio = Radio(latency_ms=150, jitter_ms=50, backpressure=True, **kw)
    radio.broker(BROKER_NAME, PLAIN, ("127.0.0.1", club.port))
    radio.broker(BROKER_NAME, SECURE, ("127.0.0.1", club.tls_port))
    return radio


def _cfg(board, tls, **net):
    values = {"ssid": "club", "password": "pinboard", "host": BROKER_NAME,
              "port": SECURE if tls else PLAIN, "user": board, "pass": USERS[board],
              "key": KEYS[board].hex(), "id": board, "tls": tls}
    values.update(net)
    return {"watchdog_ms": 8000, "net": values}


def _put_ca(state, ca):
    stage = os.path.join(str(state), "ca-stage")
    os.makedirs(stage, exist_ok=True)
    shutil.copyfile(str(ca), os.path.join(stage, "ca.der"))
    proc = upy.run_file(FLASHFS, [str(state), "put", stage], timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def _has_tls(path):
    return subprocess.run([path, "-c", "import tls"], capture_output=True,
                          timeout=60).returncode == 0


def _wait(predicate, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.1)
    raise AssertionError("waited %d s for %s" % (timeout, what))


def _games(db):
    """The logger's games as `tools.logger export` gives them, by board."""
    out = subprocess.run([sys.executable, "-m", "tools.logger", "export", "--db", str(db)],
                         capture_output=True, text=True, timeout=60, cwd=upy.ROOT)
    assert out.returncode == 0, out.stderr
    games = {}
    for line in out.stdout.splitlines():
        game = json.loads(line)
        games.setdefault(game["board"], []).append(game)
    return games


def _play_release(club, tmp_path, line, report):
    version = "%d.%d.%d" % releases.LATEST[line]
    board = "v%d-%d" % line
    state = tmp_path / board
    radio = _radio(club)
    try:
        flash(state, cfg=_cfg(board, tls=False))
        online = club.online.count(board)
        with booted(state, version=version, radio=radio, interpreter="release") as twin:
            report.append("%s: %s, %s" % (version, twin.interpreter_path or "pinned interpreter",
                                          twin.umqtt_source))
            twin.wait_display(scores_shown, timeout=90)
            _wait(lambda: club.online.count(board) > online, 60, "%s online (plain)" % board)
            play_shot(twin, fallen=(1, 2))
            play_shot(twin, fallen=(3,))
            assert twin.resets == ["PWR"], twin.resets
        # TLS: the same board, now with TLS settings and the club's CA on its flash
        flash(state, cfg=_cfg(board, tls=True), firmware=False)
        _put_ca(state, club.ca)
        path = upy.release_binary(releases.LATEST[line])
        interpreter = "release" if path and _has_tls(path) else "pinned"
        online = club.online.count(board)
        with booted(state, version=version, radio=radio, interpreter=interpreter) as twin:
            twin.wait_display(scores_shown, timeout=90)
            _wait(lambda: club.online.count(board) > online, 60, "%s online (TLS)" % board)
            play_shot(twin, fallen=(4,))
            scores = play_shot(twin, fallen=(5, 1))
            assert not any("Err" in d for d in twin.displays), twin.displays
            assert twin.resets == ["PWR"], twin.resets
        return scores
    finally:
        radio.close()


def _dead_dns(club, tmp_path):
    board = "dns"
    radio = _radio(club, dns="dead")
    try:
        flash(tmp_path, cfg=_cfg(board, tls=False))
        with booted(tmp_path, version="1.29.0", radio=radio) as twin:
            twin.wait_display(scores_shown, timeout=90)
            twin.wait_display(lambda text: text == "Err   75", timeout=30)
            play_shot(twin, fallen=(2,))
            time.sleep(10)  # longer than the watchdog, with the DNS still dead
            assert radio.queries >= 3
            assert twin.resets == ["PWR"], twin.resets
            online = club.online.count(board)
            radio.dns = "ok"
            _wait(lambda: club.online.count(board) > online, 60, "online once the DNS answers")
            play_shot(twin, fallen=(3,))
            assert twin.resets == ["PWR"], twin.resets
    finally:
        radio.close()


def _access_point_comes_late(club, tmp_path):
    board = "late"
    radio = _radio(club)
    try:
        flash(tmp_path, cfg=_cfg(board, tls=False))
        online = club.online.count(board)
        with booted(tmp_path, version="1.22.2", radio=radio, wifi=False) as twin:
            twin.wait_display(scores_shown, timeout=90)
            twin.wait_display(lambda text: text == "Err   71", timeout=30)  # no AP found
            twin.set_wifi(True)
            _wait(lambda: club.online.count(board) > online, 60,
                  "online once the access point is up")
            play_shot(twin, fallen=(1,))
            assert twin.resets == ["PWR"], twin.resets
    finally:
        radio.close()


def _too_old(tmp_path, version):
    flash(tmp_path, cfg={"watchdog_ms": 2000})
    with booted(tmp_path, version=version) as twin:
        twin.wait_display(lambda text: text == "Err   92", timeout=60)
        twin.wait_output("MicroPython %s is too old for this firmware: flash 1.22.0 or newer"
                         % version)
        time.sleep(3)  # no watchdog was armed: no reset
        assert twin.resets == ["PWR"] and twin.wdt_ms is None


def _no_tls_memory(club, tmp_path):
    radio = _radio(club)
    try:
        flash(tmp_path, cfg=_cfg("mem", tls=True))
        _put_ca(tmp_path, club.ca)
        with booted(tmp_path, version="1.29.0", radio=radio, idf_left=30 * 1024) as twin:
            twin.wait_display(scores_shown, timeout=90)
            twin.wait_display(lambda text: text == "Err   76", timeout=30)
            play_shot(twin, fallen=(1,))
            assert twin.resets == ["PWR"], twin.resets
    finally:
        radio.close()


def _esp32_heap(tmp_path, path):
    flash(tmp_path, cfg={"watchdog_ms": 8000})
    with booted(tmp_path, version="1.29.0", interpreter=path, heap="esp32") as twin:
        assert not twin.heap_note and twin.gc_heap == releases.ONE_GROWTH
        twin.wait_output("MemoryError", timeout=60)
        try:
            twin.wait_display(lambda text: text == "Err   93", timeout=30)
        except TimeoutError:
            raise AssertionError(bytes(twin.output).decode(errors="replace")) from None
        time.sleep(2)
        assert twin.resets == ["PWR"] and twin.wdt_ms is None  # never armed


def _esp32_heap_mpy(tmp_path, path):
    """The same board and heap, deployed as `make deploy` ships it (.mpy files): it boots,
    shows the scores and plays."""
    flash(tmp_path, cfg={"watchdog_ms": 8000}, mpy=True)
    with booted(tmp_path, version="1.29.0", interpreter=path, heap="esp32") as twin:
        assert not twin.heap_note and twin.gc_heap == releases.ONE_GROWTH
        twin.wait_display(scores_shown, timeout=90)
        play_shot(twin, fallen=(1, 2))
        time.sleep(2)
        out = bytes(twin.output).decode(errors="replace")
        assert "MemoryError" not in out and "Err 93" not in out, out
        assert twin.resets == ["PWR"], twin.resets


LONG_GAME = 950  # shots: a history of eight chunks on the flash (rules_core.game)


def _esp32_heap_long_game(tmp_path, path, version=None):
    """The board deployed as .mpy on the stock heap, with a 950-shot game on its flash
    (the bench's game, tools/sim/board/bench_device.py): it reads the game back and plays
    on. Reading it made the history's chunks (624 bytes each) after the application's
    code, in a heap left in pieces too small for them: MemoryError, Err 93 for good, from
    about 700 shots on; power-up now makes them first (firmware/powerup.py)."""
    game = tmp_path / "game"
    game.mkdir(parents=True)
    harness.device(["game", LONG_GAME, str(game)], heapsize=harness.BIG_HEAP,
                   interp=harness.Interpreter.find())
    state = tmp_path / "board"
    state.mkdir()
    shutil.copyfile(str(game / "flash.img"), str(state / "flash.img"))
    flash(state, cfg={"watchdog_ms": 8000}, mpy=True)
    with booted(state, version=version or NEWEST_VERSION, interpreter=path,
                heap="esp32") as twin:
        assert not twin.heap_note and twin.gc_heap == releases.ONE_GROWTH
        try:
            shown = twin.wait_display(scores_shown, timeout=90)
        except TimeoutError as exc:
            raise AssertionError("%s\n%s" % (exc, bytes(twin.output[-3000:]).decode(
                errors="replace"))) from None
        assert shown.replace(".", " ").split() != ["0", "0"], shown  # the stored game's
        play_shot(twin, fallen=(1, 2))
        time.sleep(2)
        out = bytes(twin.output).decode(errors="replace")
        assert "MemoryError" not in out and "Err 93" not in out, out
        assert twin.resets == ["PWR"], twin.resets


def _esp32_heap_net(club, tmp_path, path, mpy, heap="esp32", tls=False, version=None,
                    board=None):
    """A networked board (WiFi and the broker by name) on the GC heap of a stock ESP32
    without PSRAM, WiFi's share taken from the ESP-IDF's heap (docs/esp32.md, "The heap"):
    deployed from sources it runs out of memory and says so with Err 93 (it never comes
    online); as `make deploy` ships it (.mpy files) it connects and plays. `heap`: another
    GC heap, in bytes. `tls`: given TLS settings and the club's CA, over the broker's TLS
    listener (`path` must have the `tls` module). `version`: the release `path` is, and
    `board` the board's name, when it is not the newest."""
    board = board or ("heap-tls" if tls else "heap-mpy" if mpy else "heap-src") \
        if heap == "esp32" else "heap-%d" % (heap // 1000)
    radio = _radio(club)
    try:
        flash(tmp_path, cfg=_cfg(board, tls=tls), mpy=mpy)
        if tls:
            _put_ca(tmp_path, club.ca)
        online = club.online.count(board)
        with booted(tmp_path, version=version or NEWEST_VERSION, interpreter=path,
                    heap=heap, radio=radio) as twin:
            assert not twin.heap_note
            assert twin.gc_heap == (releases.ONE_GROWTH if heap == "esp32" else heap)
            if not mpy:
                twin.wait_output("MemoryError", timeout=90)
                try:
                    twin.wait_display(lambda text: text == "Err   93", timeout=60)
                except TimeoutError as exc:  # what the board said instead
                    raise AssertionError("%s\n%s" % (exc, bytes(twin.output[-3000:]).decode(
                        errors="replace"))) from None
                time.sleep(5)  # had the link come up meanwhile, the broker would know
                assert club.online.count(board) == online, "online from sources"
                return
            try:
                twin.wait_display(scores_shown, timeout=90)
            except TimeoutError as exc:  # what the board said instead
                raise AssertionError("%s\n%s" % (exc, bytes(twin.output[-3000:]).decode(
                    errors="replace"))) from None
            _comes_online(club, twin, board, online, "%s online" % board)
            _plays_on(twin, 1)
            if twin.heap_grows:
                HEAP_GREW[board] = twin.heap_areas()
    finally:
        radio.close()


def _comes_online(club, twin, board, online, what):
    """Waits up to 60 s for `board`'s status to go online once more than `online` times;
    else fails with what the board displayed and said meanwhile."""
    try:
        _wait(lambda: club.online.count(board) > online, 60, what)
    except AssertionError as exc:
        raise AssertionError("%s; displays %s\n%s" % (exc, twin.displays[-8:], bytes(
            twin.output[-3000:]).decode(errors="replace"))) from None


def _plays_on(twin, shots):
    """`shots` shots played, with no MemoryError, no Err 93 and no second start."""
    for _ in range(shots):
        play_shot(twin, fallen=(1, 2))
    time.sleep(2)
    out = bytes(twin.output).decode(errors="replace")
    assert "MemoryError" not in out and "Err 93" not in out, out
    assert twin.resets == ["PWR"], twin.resets


STORED_GAME = 300  # shots: the TLS board's stored game, its history in three chunks of game.his
SHORT_GAME = 100  # shots: the history in the snapshot (under 128 events)


def _esp32_heap_net_again(club, tmp_path, path, tls=False, stored=STORED_GAME):
    """A networked board on the stock heap powered up with its game on the flash, as every
    start after a new board's first is: it reads the game back, comes online and plays on.
    Plain MQTT: the game it played online at its first start (two shots). Over TLS: the
    bench's game of `stored` shots put on its flash. Reading a stored game as the App
    booted needed the readers' code beside the App: MemoryError, and the board started
    again without its link (Err 93), at every start but its first (docs/performance.md, "A
    stored game read before the App is made"); over TLS, while the context's room and the
    CA were held through the reading, with any game ("A TLS board's stored game")."""
    if not tls:
        _net_again(club, tmp_path, path, "again", None)
        return
    board = "again-tls" if stored == STORED_GAME else "short-tls"
    CAME_ONLINE[board] = _net_again(club, tmp_path, path, board, stored)


CAME_ONLINE = {}  # board with a stored game: how it went on with it (the margin's side)


def _net_again(club, tmp_path, path, board, stored, tls=None):
    """`board` on the stock heap (or the heap `path` plays): with `stored`, the bench's
    game of that many shots put on its flash and powered up once; else powered up twice,
    the second time with the game it played at the first. `tls`: over TLS or plain MQTT;
    by default TLS with `stored`, plain MQTT without. Returns how it went
    on with its stored game: "online", "without_link" or "retrying"
    (_online_or_without_link)."""
    tls = stored is not None if tls is None else tls
    state = tmp_path / "board"
    state.mkdir(parents=True)
    if stored is not None:
        game = tmp_path / "game"
        game.mkdir()
        harness.device(["game", stored, str(game)], heapsize=harness.BIG_HEAP,
                       interp=harness.Interpreter.find())
        shutil.copyfile(str(game / "flash.img"), str(state / "flash.img"))
    flash(state, cfg=_cfg(board, tls=tls), mpy=True)
    if tls:
        _put_ca(state, club.ca)
    for start in ((2,) if stored is not None else (1, 2)):
        radio = _radio(club)
        try:
            online = club.online.count(board)
            with booted(state, version="1.29.0", interpreter=path, heap="esp32",
                        radio=radio) as twin:
                shown = twin.wait_display(scores_shown, timeout=90)
                if start == 2:  # the stored game's scores, not a new game's
                    assert shown.replace(".", " ").split() != ["0", "0"], shown
                what = "%s online at start %d" % (board, start)
                if stored is None:
                    _comes_online(club, twin, board, online, what)
                    _plays_on(twin, 2)
                    continue
                came = _online_or_without_link(club, twin, board, online, shown)
                if twin.heap_grows:
                    HEAP_GREW[board] = twin.heap_areas()
                    UMQTT_OF[board] = " ".join(twin.umqtt_source.split()[:2]).rstrip(",")
                return came
        finally:
            radio.close()
    return "online"


def _online_or_without_link(club, twin, board, online, shown):
    """A board with its stored game (TLS on the stock heap, or either on the heap as it
    grows) comes online ("online"), or
    starts once more without its link (Err 93 once, a soft reset), as a board whose game
    found no room beside the link does ("without_link"), or keeps its link and finds no
    room for a connection, which it tries again after the back-off, showing Err 76
    ("retrying"); either way it shows the stored game again and plays it on, with no other
    start and no MemoryError. Which it does is the heap's layout at a margin of a few
    hundred bytes, which the twin's timing moves (docs/performance.md, "A TLS board's
    stored game"): the test holds the board to the game, and says which."""
    said = b"no memory for the network link"
    try:
        _wait(lambda: club.online.count(board) > online or said in twin.output, 60,
              "%s online or without its link" % board)
        came = "without_link" if said in twin.output else "online"
    except AssertionError as exc:  # what the board displayed and said meanwhile
        if "Err   76" not in twin.displays:  # not the heap's margin
            raise AssertionError("%s; displays %s\n%s" % (exc, twin.displays[-8:], bytes(
                twin.output[-3000:]).decode(errors="replace"))) from None
        came = "retrying"
    if came == "without_link":
        twin.wait_resets(2)
        again = twin.wait_display(scores_shown, timeout=60, since=twin.displays.index(
            "Err   93") if "Err   93" in twin.displays else None)
        assert again.replace(".", " ").split() == shown.replace(".", " ").split(), again
    for _ in range(2):
        play_shot(twin, fallen=(1, 2))
    time.sleep(2)
    out = bytes(twin.output).decode(errors="replace")
    restarted = came == "without_link"
    assert "MemoryError" not in out and out.count(said.decode()) == restarted, out
    assert twin.resets == (["PWR", "SOFT"] if restarted else ["PWR"]), twin.resets
    return came


NEWEST_VERSION = "%d.%d.%d" % releases.LATEST[releases.NEWEST]
HEAP_INTERPRETER = upy.release_binary(releases.LATEST[releases.NEWEST], bits=32)
# The older lines' own 32-bit ports, where there are any (../shared/upy has 1.25.0's): the
# stock heap played by the release a builder flashed, whose allocator, names and loading
# of .mpy files are its own
OLDER_HEAP = {line: upy.release_binary(releases.LATEST[line], bits=32)
              for line in LINES if line != releases.NEWEST}
# the same release line's 32-bit port with the `tls` module, for a board over TLS on that heap
HEAP_TLS_INTERPRETER, HEAP_TLS_WHY = upy.interpreter32_tls()
# and with the heap that grows as the ESP32's does (`upybuild --esp32-heap`), where there is one
GROWING_INTERPRETER, GROWING_WHY = upy.interpreter32_esp32heap()
if GROWING_INTERPRETER is not None and not upy.imports([GROWING_INTERPRETER], "tls"):
    GROWING_INTERPRETER, GROWING_WHY = None, "%s has no tls module" % GROWING_INTERPRETER
HEAP_GREW = {}  # board: its growing heap at the end (twin.heap_areas)
UMQTT_OF = {}  # board on the growing heap: the umqtt its twin held ("umqtt.simple 1.8.0")


@pytest.fixture(scope="module")
def boards(club, tmp_path_factory):
    """Every board of this module, playing side by side (they mostly wait on the radio and
    on real time): {name: (thread, [exception or None])}. Each test waits for its own."""
    tmp = tmp_path_factory.mktemp("boards")
    report = []
    jobs = {"release %d.%d" % line: (lambda line=line: _play_release(club, tmp, line, report))
            for line in LINES}
    jobs["dead dns"] = lambda: _dead_dns(club, tmp / "dns")
    jobs["access point late"] = lambda: _access_point_comes_late(club, tmp / "late")
    jobs["1.20.0"] = lambda: _too_old(tmp / "old-1.20", "1.20.0")
    jobs["1.21.0"] = lambda: _too_old(tmp / "old-1.21", "1.21.0")
    jobs["no tls memory"] = lambda: _no_tls_memory(club, tmp / "mem")
    if HEAP_INTERPRETER is not None:
        jobs["esp32 heap"] = lambda: _esp32_heap(tmp / "heap", HEAP_INTERPRETER)
        jobs["esp32 heap mpy"] = lambda: _esp32_heap_mpy(tmp / "heap-mpy", HEAP_INTERPRETER)
        jobs["esp32 heap long game"] = lambda: _esp32_heap_long_game(tmp / "heap-long",
                                                                     HEAP_INTERPRETER)
        for mpy in (False, True):
            jobs["esp32 heap net %s" % mpy] = (
                lambda mpy=mpy: _esp32_heap_net(club, tmp / ("heap-net-%s" % mpy),
                                                HEAP_INTERPRETER, mpy))
        jobs["heap net 120000"] = lambda: _esp32_heap_net(club, tmp / "heap-net-120",
                                                          HEAP_INTERPRETER, True, 120000)
        jobs["esp32 heap net again"] = lambda: _esp32_heap_net_again(
            club, tmp / "heap-net-again", HEAP_INTERPRETER)
    older = [(line, path) for line, path in OLDER_HEAP.items() if path is not None]
    if older:  # one after another: a dozen boards share the cores already
        jobs["esp32 heap older"] = lambda: [_esp32_heap_release(club, tmp, line, path, report)
                                            for line, path in older]
    if HEAP_TLS_INTERPRETER is not None:
        jobs["esp32 heap net tls"] = lambda: _esp32_heap_net(
            club, tmp / "heap-net-tls", HEAP_TLS_INTERPRETER, True, tls=True)
        jobs["esp32 heap net tls again"] = lambda: _esp32_heap_net_again(
            club, tmp / "heap-net-tls-again", HEAP_TLS_INTERPRETER, tls=True)
        jobs["esp32 heap net tls short"] = lambda: _esp32_heap_net_again(
            club, tmp / "heap-net-tls-short", HEAP_TLS_INTERPRETER, tls=True,
            stored=SHORT_GAME)
    if GROWING_INTERPRETER is not None:
        jobs["esp32 heap grows tls"] = lambda: _esp32_heap_net(
            club, tmp / "grow-tls", GROWING_INTERPRETER, True, tls=True, board="grow-tls")
        jobs["esp32 heap grows src"] = lambda: _esp32_heap_net(
            club, tmp / "grow-src", GROWING_INTERPRETER, False, board="grow-src")
        jobs["esp32 heap grows tls again"] = lambda: CAME_ONLINE.update(
            {"grow-again-tls": _net_again(club, tmp / "grow-again", GROWING_INTERPRETER,
                                          "grow-again-tls", STORED_GAME)})
        jobs["esp32 heap grows mqtt again"] = lambda: CAME_ONLINE.update(
            {"grow-again-mqtt": _net_again(club, tmp / "grow-again-mqtt",
                                           GROWING_INTERPRETER, "grow-again-mqtt",
                                           STORED_GAME, tls=False)})
    running = {}

    def run(job, outcome):
        try:
            job()
        except BaseException as exc:  # noqa: B036 - told to the test that waits for it
            outcome.append(exc)

    for name, job in jobs.items():
        outcome = []
        thread = threading.Thread(target=run, args=(job, outcome), daemon=True)
        thread.start()
        running[name] = (thread, outcome)
    yield running
    print("\n".join(report))
    for thread, _ in running.values():
        thread.join(60)


def _outcome(boards, name):
    thread, outcome = boards[name]
    thread.join(600)
    assert not thread.is_alive(), "%s still running" % name
    if outcome:
        raise outcome[0]


def test_a_networked_board_logs_a_whole_game_on_every_supported_release(club, boards):
    failures = []
    for line in LINES:
        try:
            _outcome(boards, "release %d.%d" % line)
        except BaseException as exc:  # noqa: B036 - every release's failure is reported
            failures.append("%d.%d: %r" % (line + (exc,)))
    assert not failures, "\n".join(failures)

    def logged(board):
        games = _games(club.db).get(board, [])
        return len(games) == 1 and games[0]["final"]["shots"] == 4

    for line in LINES:
        board = ("v%d-%d" % line).encode().hex()  # a networked board's hello: its net id
        _wait(lambda board=board: logged(board), 30, "%d.%d's four shots at the logger" % line)
        game, = _games(club.db)[board]
        assert [shot["number"] for shot in game["shots"]] == [1, 2, 3, 4]  # each once
        assert game["final"]["shots"] == 4


def test_a_dead_dns_neither_blocks_play_nor_starves_the_watchdog(boards):
    """The ESP32's getaddrinfo() would block for 7 s a DNS server (two here): longer than
    the 8 s watchdog. The board looks the name up a step a poll instead: Err 75, the game
    goes on, no reset, and once the DNS answers the board comes online."""
    _outcome(boards, "dead dns")


def test_a_join_after_a_failed_one_is_not_failed_by_the_reason_before(boards):
    """After a power cut the board is up before the club's access point: its joins fail
    (201, no AP found). From 1.22 the ESP32 keeps that reason through disconnect() and the
    next connect() until the new join ends (ports/esp32/network_wlan.c), so status()
    reports it at the first poll of every new join: a link that believed it would drop
    each join at once and never come online. Counted only 5 s after connect(), the reason
    is the new join's own: once the access point is up, the board comes online."""
    _outcome(boards, "access point late")


@pytest.mark.parametrize("version", ["1.20.0", "1.21.0"])
def test_an_older_micropython_shows_err_92_and_starts_nothing(boards, version):
    _outcome(boards, version)


def test_no_memory_for_tls_shows_err_76_and_play_goes_on(boards):
    """The ESP-IDF heap left for WiFi (16 KB) and TLS (22 KB) is smaller than both: mbedtls
    fails to allocate (MBEDTLS_ERR_SSL_ALLOC_FAILED), which is not the broker's fault."""
    _outcome(boards, "no tls memory")


def test_the_esp32_heap_on_a_32_bit_interpreter(boards):
    """The twin gives the firmware the GC heap of an ESP32 without PSRAM (111,936 bytes
    after its one growth, releases.gc_heap). The firmware deployed from sources does not
    fit it even without network (compiling it takes the heap): MemoryError, the display
    says Err 93 (made at start-up, when there was room), nothing starts. The same board
    deployed as .mpy files fits, and plays."""
    if HEAP_INTERPRETER is None:
        pytest.skip("no 32-bit MicroPython %d.%d.%d in %s or build/upy (make upy32 "
                    "MICROPYTHON_SRC=DIR builds one)"
                    % (releases.LATEST[releases.NEWEST] + (upy.UPY_DIR,)))
    _outcome(boards, "esp32 heap")
    _outcome(boards, "esp32 heap mpy")


def test_a_950_shot_game_is_read_back_and_played_on_on_the_esp32_heap(boards):
    if HEAP_INTERPRETER is None:
        pytest.skip("no 32-bit MicroPython %d.%d.%d in %s or build/upy (make upy32 "
                    "MICROPYTHON_SRC=DIR builds one)"
                    % (releases.LATEST[releases.NEWEST] + (upy.UPY_DIR,)))
    _outcome(boards, "esp32 heap long game")


def _esp32_heap_release(club, tmp, line, path, report):
    """On an older line's own 32-bit port: the networked board as `make deploy` ships it
    comes online on the stock heap and plays, and the board with a 950-shot game stored
    reads it back and plays on. umqtt's bytecode is outside the heap as on the board: in a
    ROMFS image, or before 1.25 (no VfsRom) frozen in the port (tools.port.upybuild);
    in a port that has neither it is loaded into the heap, harsher than the board."""
    version = "%d.%d.%d" % releases.LATEST[line]
    where = {"rom": "in a ROMFS image", "frozen": "frozen in the port",
             "heap": "in the heap (harsher than the board)"}[port_modules_place(path)]
    report.append("%s on the stock heap: %s, umqtt %s" % (version, path, where))
    _esp32_heap_net(club, tmp / ("heap-net-%s" % version), path, True, version=version,
                    board="heap-%d-%d" % line)
    _esp32_heap_long_game(tmp / ("heap-long-%s" % version), path, version)


def test_the_esp32_heap_on_older_releases_own_32_bit_interpreters(boards):
    """The default deployment on the stock heap of each older supported release whose
    32-bit unix port is here (only the newest line's is needed by the tests above)."""
    if not any(OLDER_HEAP.values()):
        pytest.skip("no 32-bit MicroPython of an older supported release in %s or build/upy"
                    % upy.UPY_DIR)
    _outcome(boards, "esp32 heap older")


def _heap_interpreter():
    if HEAP_INTERPRETER is None:
        pytest.skip("no 32-bit MicroPython %d.%d.%d in %s or build/upy (make upy32 "
                    "MICROPYTHON_SRC=DIR builds one)"
                    % (releases.LATEST[releases.NEWEST] + (upy.UPY_DIR,)))


def test_a_networked_board_from_sources_runs_out_of_the_esp32_heap(boards):
    """The same heap with the network: WiFi joined (its 16 KB from the ESP-IDF's heap) and
    the broker looked up by name. Deployed from sources the networked board runs out of
    memory (MemoryError, Err 93) and never comes online."""
    _heap_interpreter()
    _outcome(boards, "esp32 heap net False")


def test_a_networked_board_deployed_as_mpy_comes_online_in_120_kb_of_heap(boards):
    """A larger heap than the stock one (below), where the pieces fall otherwise: in 120,000
    bytes of GC heap the networked board, deployed as .mpy files, keeps room for its
    application and its game from power-up (firmware/powerup.py), comes online and plays.
    Making its blocks in the order they were needed, it built its link there but failed
    every connection (it came online in 124 KB; docs/performance.md, "The networked board
    on the ESP32's heap, step by step")."""
    _heap_interpreter()
    _outcome(boards, "heap net 120000")


def test_a_networked_board_deployed_as_mpy_fits_the_esp32_heap(boards):
    """Deployed as `make deploy` ships it (.mpy files), the networked board comes online on
    that heap and plays: the application made once the power-up's code is dropped, its
    rooms kept at the top of the heap (one for its code too), the game's reader and the
    snapshot's dropped before a new game is made, the link's way up loaded a module at a
    time (docs/performance.md, "The networked board on the ESP32's heap, step by step" and
    "The stock heap: the networked board comes online")."""
    _heap_interpreter()
    _outcome(boards, "esp32 heap net True")


def test_a_networked_board_deployed_as_mpy_comes_online_over_tls_on_the_esp32_heap(boards):
    """The same board and heap over TLS: given TLS settings and the club's CA, it connects
    to the broker's TLS listener, the handshake's 22 KB and WiFi's 16 KB from the ESP-IDF's
    40 KB (Mbed TLS takes its buffers from the unix port's C heap, as the ESP-IDF's takes
    them from its own, not from the GC heap), and holds the TLS context, the gate's module
    and the SSL objects in its GC heap on top of the plain board's: it comes online and
    plays, with no MemoryError and no Err 93 (its TLS context made in a room of its own,
    from the CA read at power-up: firmware/powerup.py). Played on a 32-bit interpreter of the same
    release line with the `tls` module (tools.port.upy.interpreter32_tls)."""
    if HEAP_TLS_INTERPRETER is None:
        pytest.skip("%s; `make upy32 MICROPYTHON_SRC=DIR` builds one from a MicroPython tree "
                    "with lib/mbedtls checked out" % HEAP_TLS_WHY)
    _outcome(boards, "esp32 heap net tls")


def test_a_networked_board_comes_online_again_with_its_game_stored_on_the_esp32_heap(boards):
    """Powered up again with the game it played online stored, the networked board on the
    stock heap reads it back, comes online and plays on (no Err 93, no second start)."""
    _heap_interpreter()
    _outcome(boards, "esp32 heap net again")


@pytest.mark.parametrize("job, board, shots", [
    ("esp32 heap net tls again", "again-tls", STORED_GAME),
    ("esp32 heap net tls short", "short-tls", SHORT_GAME)])
def test_a_tls_board_keeps_and_plays_its_stored_game_on_the_esp32_heap(boards, hostile_report,
                                                                       job, board, shots):
    """The same over TLS, with the bench's 300-shot game (its history in chunks of
    game.his) or 100-shot game (its history in the snapshot) on its flash: it comes online,
    or, at the heap's margin, starts once more without its link, or keeps trying to connect
    (Err 76, no room for the connection); it shows the stored game and plays it on either
    way (docs/performance.md, "A TLS board's stored game"). With the
    TLS context's room and the CA held through the reading it never came online; letting
    the context go when the game found no room keeps the board playing (it halted on Err 93
    for good)."""
    if HEAP_TLS_INTERPRETER is None:
        pytest.skip("%s; `make upy32 MICROPYTHON_SRC=DIR` builds one from a MicroPython tree "
                    "with lib/mbedtls checked out" % HEAP_TLS_WHY)
    _outcome(boards, job)
    came = CAME_ONLINE[board]
    hostile_report("twin: TLS board on the stock heap, %d shots stored" % shots,
                   **{outcome: int(came == outcome)
                      for outcome in ("online", "without_link", "retrying")})


def test_the_esp32_heap_as_it_grows_over_tls(boards, hostile_report):
    """On an interpreter whose GC heap grows as the ESP32's does (56 KB, then an area from
    the ESP-IDF's regions when an allocation finds no room; WiFi and TLS take their
    buffers from the same regions: docs/esp32.md, "The heap"), a board over TLS comes
    online having grown its heap once, to the stock heap's 111,936 bytes, and leaves the
    ESP-IDF the rest. Powered up with the bench's 300-shot game stored it plays the game
    on, and the report says how often its heap grew and whether it came online: at the
    read of the game the two areas' pieces may be too few, and a second growth takes the
    ESP-IDF's room for TLS (docs/performance.md, "The heap as it grows"). Deployed from
    sources, the compilation grows the heap into all of the ESP-IDF's regions: the WiFi
    driver found no room to start, which stopped the board at the REPL, and then the
    way out of the failed start found none either, a traceback with nothing shown; the
    board shows Err 93, as on the one-piece heap."""
    if GROWING_INTERPRETER is None:
        pytest.skip("no interpreter with the growing heap: %s; `python -m tools.port.upybuild "
                    "--src DIR --esp32-heap` builds one" % GROWING_WHY)
    _outcome(boards, "esp32 heap grows src")
    _outcome(boards, "esp32 heap grows tls")
    areas, regions = HEAP_GREW["grow-tls"]
    assert areas == [releases.ONE_GROWTH - releases.FIRST_POOL], areas  # grown once
    # the growth took the region above the first area; WiFi's and the TLS connection's
    # buffers are in those below, and nothing else is
    taken = [inspect.signature(Radio).parameters[name].default
             for name in ("wifi_bytes", "tls_bytes")]
    below = len(releases.IDF_BELOW)
    assert regions[below:] == [0] * len(releases.IDF_ABOVE), regions
    assert sum(regions[:below]) == sum(releases.IDF_BELOW) - sum(taken), regions
    _outcome(boards, "esp32 heap grows tls again")
    areas, regions = HEAP_GREW["grow-again-tls"]
    came = CAME_ONLINE["grow-again-tls"]
    # once online, a heap grown into all but a frame's block of the ESP-IDF's regions leaves
    # the link nothing to receive into (docs/esp32.md, "The radio"): counted apart
    hostile_report("twin: TLS board, 300 shots stored, on the heap as it grows, %s"
                   % UMQTT_OF["grow-again-tls"], grew=len(areas), idf_free=sum(regions),
                   room_for_frames=int(max(regions) >= espnet.RX_FRAME),
                   **{outcome: int(came == outcome)
                      for outcome in ("online", "without_link", "retrying")})


def test_a_plain_mqtt_board_with_a_stored_game_comes_online_on_the_heap_as_it_grows(
        boards, hostile_report):
    """The same heap, a board on plain MQTT with the bench's 300-shot game stored: it
    reads and plays the game and comes online. Its heap grew once, to the stock heap's
    111,936 bytes, and its reading may grow it a second time into the ESP-IDF's lower
    region, which WiFi has taken its share of already; the report says how often
    (docs/performance.md, "The heap as it grows")."""
    if GROWING_INTERPRETER is None:
        pytest.skip("no interpreter with the growing heap: %s; `python -m tools.port.upybuild "
                    "--src DIR --esp32-heap` builds one" % GROWING_WHY)
    _outcome(boards, "esp32 heap grows mqtt again")
    assert CAME_ONLINE["grow-again-mqtt"] == "online", CAME_ONLINE["grow-again-mqtt"]
    areas, regions = HEAP_GREW["grow-again-mqtt"]
    assert areas[0] == releases.ONE_GROWTH - releases.FIRST_POOL, areas  # the one growth
    assert len(areas) <= 2, areas
    # WiFi's share is taken, and whatever a second growth took; the rest is free
    wifi = inspect.signature(Radio).parameters["wifi_bytes"].default
    # (beside its pool an area holds its allocation tables and header: a sixteenth more at most)
    taken = sum(area * 17 // 16 + 64 for area in areas[1:])
    assert sum(regions) >= sum(releases.IDF_BELOW) - wifi - taken, (areas, regions)
    hostile_report("twin: plain MQTT board, 300 shots stored, on the heap as it grows, %s"
                   % UMQTT_OF["grow-again-mqtt"], grew=len(areas), idf_free=sum(regions))


def test_a_tls_board_with_an_oversized_ca_file_still_plays_on_the_esp32_heap(tmp_path):
    """Power-up reads a TLS board's CA while the heap is whole (firmware/powerup.py): a
    /ca.der of 64 KB (not a certificate, and more than the heap has in one piece) is left to
    the link, which reports it when it connects, and the game starts; read whole at
    power-up it stopped the board with Err 93 for good."""
    if HEAP_INTERPRETER is None:
        pytest.skip("no 32-bit interpreter of MicroPython %d.%d (docs/performance.md)"
                    % releases.NEWEST)
    flash(tmp_path, cfg=_cfg("heap-tls", tls=True), mpy=True, files={"ca.der": "x" * 65536})
    with booted(tmp_path, version="1.29.0", interpreter=HEAP_INTERPRETER,
                heap="esp32") as twin:
        twin.wait_display(scores_shown, timeout=90)
        assert "Err   93" not in twin.displays
