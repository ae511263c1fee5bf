"""The board's heap on the 32-bit interpreter: the smallest heap a game plays in, the code a
playing board holds, the networked board's peak, from .mpy, sources and a frozen build.
"""

import json
import os
import shutil
import subprocess
import tempfile

from tools.bench.esp32 import ESP32_HEAP
from tools.bench.harness import (
    BIG_HEAP,
    PINNED,
    Interpreter,
    Unavailable,
    _device_env,
    parse_lines,
)
from tools.port import upy
from tools.sim.board.shots import LONG_SETTINGS, long_game

# -- smallest heap --------------------------------------------------------------------------------

def shot_timeline(shots, seed=11):
    """A timeline of `shots` valid scored shots, pseudo-random but the same every run."""
    return long_game(shots, seed)


SIM = upy.entry("board")
HEAP_DEVICE = upy.entry("heap")
# The seed of the simulated board's random bytes (run.py --seed): the game's identity goes
# into what the board stores and sends, and so into the heap it takes (run.py
# seeded_urandom); one seed makes every run and every checkout measure the same game.
SEED = 1
# Where heap_figures keeps its files: in the tree, so that every path the port is given,
# named from where it runs, is the same in every checkout (port_run).
WORK = os.path.join("build", "bench-heap")


def port_run(script, args, cwd, interp, first=(), heapsize=BIG_HEAP, timeout=600):
    """The port running `script` (a file of the tree) in `cwd`, with `first` (folders) and
    the tree on its search path, every path named from `cwd`. The port interns the names
    it is given (sys.path's folders, sys.argv, each module's __file__) among the names of
    the firmware, in string chunks of 128 bytes and more: a name longer by the length of
    a checkout's folder once moved where a chunk ended, and with it the heap figures by
    up to a few hundred bytes. Named from a folder in the tree, they are the same
    wherever the tree is."""
    def rel(path):
        return os.path.relpath(os.path.join(cwd, path), cwd)

    search = [rel(p) for p in first] + [rel(upy.ROOT), rel(upy.UPYLIB), ".frozen"]
    with tempfile.TemporaryDirectory(prefix="bench-") as scratch:
        env = _device_env(scratch)
        env["MICROPYPATH"] = ":".join(search)
        return subprocess.run(
            interp.command([rel(os.path.join(upy.ROOT, script)), *map(str, args)], heapsize),
            capture_output=True, text=True, env=env, cwd=cwd, timeout=timeout, check=False)


def plays(timeline, shots, budget, interp=PINNED, first=(), extra=(), online=None):
    """(played, largest free block at the end) for the firmware playing the whole
    timeline with `budget` bytes of heap for its data (tools/sim/board/run.py
    --heap-budget: the code is loaded first, then everything beyond the budget is taken
    away). `first`: folders searched before the tree (a staged deployment); paths in
    `extra` are named from the timeline's folder, where the run starts (port_run).
    `online` ("plain" or "tls"): a networked board has played only if it also came
    online that way and is still on the broker at the end (run.py's `net:` line): a link
    that finds no room shows an error and the game goes on without it."""
    here = os.path.dirname(os.path.abspath(timeline))
    # --state: the flash image lives in a file, as the board's flash is not in its heap
    state = tempfile.mkdtemp(prefix="heap-", dir=here)
    try:
        args = ["--timeline", os.path.basename(timeline), "--state", os.path.basename(state),
                "--rules", LONG_SETTINGS["rules"],
                "--distance", str(LONG_SETTINGS["distance"][0]), "--heap-budget", str(budget),
                "--seed", str(SEED), *extra]
        proc = port_run(SIM, args, here, interp, first)
    finally:
        shutil.rmtree(state, ignore_errors=True)
    if proc.returncode != 0:
        said = proc.stdout + proc.stderr  # the port prints an uncaught exception on stdout
        if "MemoryError" in said or "memory allocation failed" in said:
            return False, None
        raise Unavailable("the sim failed with a budget of %d: %s" % (budget, said.strip()[-300:]))
    largest = None
    link = None
    for line in proc.stderr.splitlines():
        if line.startswith("heap:") and "largest block" in line:
            largest = int(line.split()[-1])
        elif line.startswith("net: "):  # "net: up, tls, 1 connections, last error 0"
            words = line[5:].replace(",", "").split()
            link = words[0], words[1], int(words[2])
    try:
        played = json.loads(proc.stdout.strip().splitlines()[-1])["shots"] == shots
    except (ValueError, KeyError, IndexError) as exc:
        raise Unavailable("the sim printed no final state: %s" % exc) from None
    if online is not None:
        played = played and link is not None and link[0] == "up" and link[1] == online \
            and link[2] >= 1
    return played, largest


def smallest_heap(works, step, low=1024, high=256 << 10, start=32768, fine=None,
                  climb=False):
    """The smallest budget from which every budget up to `start`, `step` bytes apart,
    works (`works(budget)` -> bool): down from `start` until one fails. Whether a budget
    plays is not monotone (a heap in pieces may lack one block a smaller heap happened to
    keep), so a bisection could land on a lucky budget below failing ones. If `start`
    fails too, bisection from `high` down to it (to `step` bytes). With `climb` (for
    searches that are monotone enough, the imports': their figures lie a few steps above
    their start, and a bisection from `high` took twice the runs), up from `start` by one
    step, two, four and so on until one works, then bisection between the last two tried;
    Unavailable if even `high` fails. With `fine` (a divisor of `step`), the last budget
    that worked is then followed down in `fine` steps until one fails: the figure to
    `fine` bytes for a few more runs."""
    if not climb and not works(high):
        raise Unavailable("it fails even with %d bytes of heap" % high)
    if works(start):
        while start - step >= low and works(start - step):
            start -= step
        found = start
    else:
        low = start
        if climb:
            reach = step
            while not works(min(start + reach, high)):
                if start + reach >= high:
                    raise Unavailable("it fails even with %d bytes of heap" % high)
                low = start + reach
                reach *= 2
            high = min(start + reach, high)
        while high - low > step:
            mid = (low + high) // 2
            if works(mid):
                high = mid
            else:
                low = mid
        found = high
    if fine:
        while found - fine > max(low, found - step) and works(found - fine):
            found -= fine
    return found


def stage_tree(workdir, name, mpy):
    """The files `make deploy` copies to a board (umqtt included), staged in workdir."""
    from tools.board import deploy

    dest = os.path.join(workdir, "stage-" + name)
    try:
        deploy.stage(dest, mpy=mpy, libraries=True)
    except deploy.DeployError as exc:
        raise Unavailable(str(exc)) from None
    return dest


def frozen_image(stage, workdir):
    """A ROMFS image (MicroPython's VfsRom) of the staged micropython-lib modules: a stock
    ESP32 build has umqtt frozen (ports/esp32/boards/manifest.py: require("umqtt.simple")),
    and a module imported from a VfsRom runs its bytecode where it lies, as a frozen one
    does; its objects still come out of the heap. (A frozen module keeps even its raw code
    records and names in flash, so the figure is if anything a little high.)"""
    from tools.sim.board.frozenrom import write_image

    return write_image(os.path.join(stage, "lib"), os.path.join(workdir, "frozen.romfs"))


# heap_device's runs: room for the sources' import peak (searched up to 512 KB, import_heap)
# and no more: the names' pool is made a name at a time, each asking gc.mem_free(), which
# walks the whole heap's table (8 MB made a run take 7 s, 1 MB takes under one)
DEVICE_HEAP = "1M"


def heap_device(args, stage, interp, frozen=None, heapsize=DEVICE_HEAP):
    """tools/sim/board/heap_device.py with the staged deployment first on the path, found as
    a board finds it: from the current folder (the ESP32's sys.path starts with ""; the
    unix port loads no .mpy file through "", so "."), so that each module's `__file__`
    is about the board's ("./firmware/app.mpy" for "firmware/app.mpy"), not a path of
    this machine's whose length would count in the names' heap (port_run)."""
    extra = ["--frozen", os.path.relpath(frozen, stage)] if frozen else []
    proc = port_run(HEAP_DEVICE, list(args) + extra, stage, interp, first=(".",),
                    heapsize=heapsize, timeout=300)
    if proc.returncode != 0:
        said = (proc.stderr.strip() or proc.stdout.strip())[-300:]
        raise Unavailable("%s %s failed: %s" % (HEAP_DEVICE, " ".join(map(str, args)), said))
    out = parse_lines(proc.stdout)
    tables = interned_names(proc.stdout)
    if len(tables) >= 2:  # `code`: the names the firmware's modules interned
        out["names"] = sorted(tables[1] - tables[0])
        out["names_dial"] = sorted(tables[-1] - tables[1])  # with `net`, the way up's
    return out


def interned_names(text):
    """The names (qstrs) each `micropython.qstr_info(1)` in `text` listed: a set a table.
    Only the names interned since the interpreter started are listed; its own (the
    ESP32's are in flash) are not."""
    tables = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("qstr pool:"):
            tables.append(set())
        elif tables and line.startswith("Q(") and line.endswith(")"):
            tables[-1].add(line[2:-1])
    return tables


def import_heap(stage, interp, frozen, step, start, net=False):
    """The smallest heap the board's imports fit in at their peak (heap_device imports
    BUDGET), searched down from `start` in `step`s: a source compiled on the board needs
    far more while it compiles than it keeps."""
    def works(budget):
        try:
            heap_device(["imports", budget] + (["net"] if net else []), stage, interp, frozen)
            return True
        except Unavailable as exc:
            if "MemoryError" in str(exc) or "memory allocation failed" in str(exc):
                return False
            raise
    # from a whole number of steps: the budgets tried do not move with a few bytes of code;
    # sources compiled on the board may need more than 256 KB at their peak
    return smallest_heap(works, step, high=512 << 10, start=-(-start // step) * step,
                         climb=True)


def heap_figures(sizes, workdir, interp):
    """The ram32_* figures (docs/performance.md, "Heap"): the code a board holds, the
    heap its data needs in a 500-shot game, the peaks, and what is left in one piece.
    Their files are made afresh in the tree (WORK, port_run), the broker's in workdir."""
    work = os.path.join(upy.ROOT, WORK)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    try:
        return _heap_figures(sizes, work, workdir, interp)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _heap_figures(sizes, workdir, elsewhere, interp):
    mpy = stage_tree(workdir, "mpy", True)
    frozen = frozen_image(mpy, workdir)
    out = {"heap_on_bits": interp.bits}
    notes = {}
    if interp.note:
        notes["heap"] = interp.note
    code = heap_device(["code"], mpy, interp, frozen)["held"]
    out["ram32_code_play_bytes"] = code
    out["ram32_code_net_bytes"] = heap_device(["code", "net"], mpy, interp, frozen)["held"]

    import_play = import_heap(mpy, interp, frozen, sizes["heap_step"], code)
    path = os.path.join(workdir, "bench.timeline")
    with open(path, "w") as f:
        f.write(shot_timeline(sizes["heap_shots"]))
    shots = sizes["heap_shots"]
    first = (mpy,)
    frozen_arg = os.path.relpath(frozen, workdir)  # named from where the runs start

    def play(budget):
        return plays(path, shots, budget, interp, first, ["--frozen", frozen_arg])[0]

    data = smallest_heap(play, sizes["heap_step"], start=16384, fine=sizes["heap_fine"])
    out["ram32_data_play_bytes"] = data
    out["ram32_peak_play_bytes"] = max(import_play, code + data)
    # What a 500-shot game leaves in one piece on a board: the ESP32's heap less the code
    played, largest = plays(path, shots, ESP32_HEAP - code, interp, first,
                            ["--frozen", frozen_arg])
    if played:
        out["ram32_largest_free_play_bytes"] = largest
    detail = {"import_play_bytes": import_play}
    out["ram32_detail"] = detail
    try:
        out.update(net_heap_figures(sizes, workdir, interp, mpy, frozen, data, detail,
                                    elsewhere, notes))
    except Unavailable as exc:
        notes["heap_net"] = str(exc)
    try:
        rom_figures(sizes, workdir, interp, mpy, data, detail)
    except Unavailable as exc:
        notes["heap_rom"] = str(exc)
    if notes:
        out["notes"] = notes
    return out


def rom_figures(sizes, workdir, interp, mpy, data_play, detail):
    """The peaks with the firmware's code in flash (ram32_detail's *_rom_bytes): the whole
    deployment in a ROMFS image, as a build with a ROMFS partition runs it (each module's
    bytecode where it lies, py/persistentcode.c), counted as the `.mpy` figures are, with
    the data those measured (`data_play`, detail's data_net_bytes). A frozen build keeps
    more in flash still (the raw code records, the names, the viper modules' machine
    code, which from ROMFS are compiled into the heap), so these are its figures at the
    most. They say what the peak targets ask of the code; no stock ESP32 build has a
    ROMFS partition (docs/performance.md, "The code in flash: what the peak targets
    ask")."""
    from tools.sim.board.frozenrom import write_image

    rom = write_image(mpy, os.path.join(workdir, "code.romfs"))
    step = sizes["heap_step"]
    code = heap_device(["code"], mpy, interp, rom)["held"]
    imported = import_heap(mpy, interp, rom, step, code)
    detail.update(code_play_rom_bytes=code, peak_play_rom_bytes=max(imported, code + data_play))
    if "data_net_bytes" in detail:
        held = heap_device(["code", "net"], mpy, interp, rom)
        imported = import_heap(mpy, interp, rom, step, held["held"], net=True)
        detail.update(code_net_rom_bytes=held["held"], peak_net_rom_bytes=max(
            imported, held["held"] + held["dial"] + detail["data_net_bytes"]))


NET_BOARD = "bench1"  # the board's MQTT user and id in the bench's broker


def tls_interpreter(interp):
    """(the interpreter the TLS objects' heap is taken on, a note or None). The SSLContext
    and SSL socket objects are mostly pointers, so a 32-bit figure is the board's: `interp`
    when it has the tls module, else a 32-bit port of the same release line that has it
    (tools.port.upy.interpreter32_tls: $PINBOARD_UPY32_TLS, or build/upy and ../shared/upy),
    else the pinned 64-bit one, and the note says so. With `interp` itself 64-bit all the
    heap's figures are taken there, and its own note says so."""
    if interp.bits != 32 or interp.has_module("tls"):
        return interp, None
    path, why = upy.interpreter32_tls()
    if path:
        return Interpreter(path), None
    return PINNED, ("the TLS objects (ram32_detail.tls_gc_bytes) taken on the pinned 64-bit "
                    "interpreter, whose pointers are twice the board's: %s" % why)


def net_heap_figures(sizes, workdir, interp, mpy, frozen, data_play, detail,
                     broker_dir=None, notes=None):
    """The ram32_*_net figures: a board with the network link connected to a broker
    (tools.broker: Mosquitto on 127.0.0.1) playing a short game, against the same board
    without it: what the link adds to the data is taken onto the 500-shot game's
    (ram32_data_play_bytes). Where there is a 32-bit interpreter with TLS
    (tls_interpreter) the short game is played over TLS on it, as a club's board plays
    (the broker with a TLS listener and a CA of its own, the board given `"tls": true`
    and the CA in its flash), and the link's data is that game's: the TLS objects and
    whatever the way up over TLS holds (ram32_detail.net_game "tls"). On the ESP32
    mbedtls's own memory (16 KB + 4 KB of record buffers, the certificate, the handshake)
    comes from the ESP-IDF's heap, not MicroPython's, as on the unix port it comes from
    malloc. Without one the game runs plain MQTT and what a TLS connection keeps in
    MicroPython's heap, the SSLContext and SSL socket objects, is measured apart
    (tools/sim/board/heap_device.py tlsobjects; tls_interpreter's note goes to `notes`)
    and added (net_game "plain"). The plain game's figures are kept in the detail either
    way (net_link_data_plain_bytes, data_net_plain_bytes). The same is done from the
    sources (ram32_peak_net_src_bytes: the modules compiled on the board)."""
    from tools.board import broker

    why = broker.available()
    if why:
        raise Unavailable(why)
    notes = {} if notes is None else notes
    tls_interp, note = tls_interpreter(interp)
    if note:
        notes["heap_tls"] = note
    tls_gc = heap_device(["tlsobjects"], workdir, tls_interp)["held"]
    detail["tls_gc_bytes"] = tls_gc
    detail["tls_gc_on_bits"] = tls_interp.bits
    src = stage_tree(workdir, "src", False)
    held = heap_device(["code", "net"], mpy, interp, frozen)
    held_src = heap_device(["code", "net"], src, interp, frozen)
    code_net, dial = held["held"], held["dial"]
    code_net_src, dial_src = held_src["held"], held_src["dial"]
    detail.update(dial_bytes=dial, dial_src_bytes=dial_src)
    # the names the networked firmware interns (for good) as it loads, and its way up's
    # (docs/performance.md, "The firmware's names")
    detail.update(names_net=len(held["names"]), names_dial=len(held["names_dial"]))
    shots = sizes["net_shots"]
    path = os.path.join(workdir, "net.timeline")
    with open(path, "w") as f:
        f.write(shot_timeline(shots))
    users = {NET_BOARD: "bench-pw", "logger": "logger-pw"}
    home = os.path.join(broker_dir or workdir, "broker")
    # over TLS where a 32-bit interpreter has it (tls_interpreter gives the 64-bit one
    # only when there is none)
    tls_game = tls_interp.bits == 32
    listener, tls_port = "", None
    if tls_game:
        certs = os.path.join(home, "certs")
        os.makedirs(certs, exist_ok=True)
        broker.make_certificates(certs)  # the broker's certificate names 127.0.0.1
        # the CA named from where the runs start, as every path the port is given (port_run)
        shutil.copyfile(os.path.join(certs, "ca.der"), os.path.join(workdir, "ca.der"))
        tls_port = broker.free_port()
        listener = broker.tls_listener_text(certs, tls_port)
    out = {}
    with broker.Mosquitto(home, users, (NET_BOARD,), extra=listener) as b:
        def config(name, tls):
            cfg = os.path.join(workdir, name)
            with open(cfg, "w") as f:
                json.dump({"net": {"ssid": "club", "password": "pinboard",
                                   "host": "127.0.0.1", "port": tls_port if tls else b.port,
                                   "user": NET_BOARD, "pass": users[NET_BOARD],
                                   "key": "00" * 32, "id": NET_BOARD, "tls": tls}}, f)
            return ["--config", name] + (["--ca", "ca.der"] if tls else [])

        frozen_arg = ["--frozen", os.path.relpath(frozen, workdir)]
        way = {False: config("net.cfg", False)}
        if tls_game:
            way[True] = config("net-tls.cfg", True)

        def runs(stage, net, on=interp, tls=False):
            extra = frozen_arg + (way[tls] if net else [])
            online = ("tls" if tls else "plain") if net else None

            def works(budget):
                return plays(path, shots, budget, on, (stage,), extra, online)[0]
            return works

        # Each to `heap_fine` bytes: the link's share is a difference of two searches, and
        # a bisection stops anywhere in a window of up to `heap_step` above the threshold
        # (where, its start decides: a change of the play figure moved the link's by up to
        # a KB either way; docs/performance.md, "The link's share to 256 bytes").
        fine = sizes["heap_fine"]
        play_short = smallest_heap(runs(mpy, False), sizes["heap_step"], start=16384,
                                   fine=fine)
        net_short = smallest_heap(runs(mpy, True), sizes["heap_step"], start=play_short,
                                  fine=fine)
        link_plain = net_short - play_short
        data_net = data_net_plain = data_play + max(0, link_plain) + tls_gc
        link = link_plain
        detail.update(net_link_data_plain_bytes=link_plain, data_net_plain_bytes=data_net_plain)
        if tls_game:
            try:
                # the play-only short game on the same interpreter, for the difference
                play_tls = play_short if tls_interp is interp else smallest_heap(
                    runs(mpy, False, tls_interp), sizes["heap_step"], start=16384, fine=fine)
                tls_short = smallest_heap(runs(mpy, True, tls_interp, True),
                                          sizes["heap_step"], start=play_tls, fine=fine)
            except Unavailable as exc:
                notes["heap_net_tls"] = "the short game over TLS: %s" % exc
                tls_game = False
            else:
                link = tls_short - play_tls
                data_net = data_play + max(0, link)
        detail.update(net_game="tls" if tls_game else "plain", net_link_data_bytes=link,
                      data_net_bytes=data_net)
        if tls_game:
            game = ("played over TLS on a 32-bit interpreter with TLS (its data holds the "
                    "TLS objects and the TLS way up)")
        else:
            game = ("played over plain MQTT, the TLS objects measured apart added "
                    "(ram32_detail.tls_gc_bytes)")
            if "heap_net_tls" not in notes:
                game += ": no 32-bit interpreter with TLS here"
        notes["heap_net_game"] = "ram32_peak_net_bytes: the short networked game " + game

        import_net = import_heap(mpy, interp, frozen, sizes["heap_step"], code_net, net=True)
        import_net_src = import_heap(src, interp, frozen, sizes["heap_step"], code_net,
                                     net=True)
        detail.update(import_net_bytes=import_net, import_net_src_bytes=import_net_src,
                      code_net_src_bytes=code_net_src)
        # a reconnection late in the game loads the link's way up on top of it all
        out["ram32_peak_net_bytes"] = max(import_net, code_net + dial + data_net)
        out["ram32_peak_net_src_bytes"] = max(import_net_src, code_net_src + dial_src + data_net)
        # what the short networked game leaves in one piece: the ESP32's heap less the code
        # (over plain MQTT, less the TLS objects too)
        if tls_game:
            played, largest = plays(path, shots, ESP32_HEAP - code_net, tls_interp, (mpy,),
                                    frozen_arg + way[True], "tls")
        else:
            played, largest = plays(path, shots, ESP32_HEAP - code_net - tls_gc, interp,
                                    (mpy,), frozen_arg + way[False], "plain")
        if played:
            out["ram32_largest_free_net_bytes"] = largest
    return out
