"""What a TLS handshake costs the board, poll by poll (docs/network.md, "TLS").

    python -m tools.bench.tls            # a table; about a minute per row under callgrind
    python -m tools.bench.tls --json

Makes test certificates with openssl (RSA 2048 and ECDSA P-256, each from a CA of its own),
starts Mosquitto on 127.0.0.1 with a TLS 1.2 listener for each, and connects the network
link (boardlib.mqttlink, `"tls": true`, tools/sim/board/tls_device.py) under
`valgrind --tool=callgrind`, which dumps its counts before every poll. For each key
exchange: the instructions of the costliest poll of the connection (starting TLS, the
handshake, MQTT CONNECT, SUBSCRIBE) and of all of them, and the same in ESP32 milliseconds by the
project's conversion (tools.bench: cycles per instruction at 240 MHz, docs/performance.md).
"Whole answer" rows give mbedtls everything the broker sent at once, as a plain
non-blocking socket would; the others take one TLS record a poll, as the firmware does.
The firmware's modules are staged as `make deploy` ships them (`.mpy`, first on the path),
so that the modules the link loads in a poll (the handshake's, the login's) cost that poll
what loading them costs a board, not a compilation from source.
"""

import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

from tools.bench import esp32 as bench_esp32
from tools.board import broker, deploy
from tools.port import upy

DEVICE = upy.entry("tls")
USER, PASSWORD = "t1", "t1-pw"
# the polls of a connection: the first "handshake" poll loads the handshake's module and
# starts TLS (the gate, the SSL socket, ClientHello; the context is made ahead, as the game
# starts on a board)
CONNECTION = ("dial", "handshake", "login", "subscribe")
# (row, certificate key, cipher suite offered, a record a poll)
CASES = [
    ("RSA key exchange, RSA 2048 (the firmware)", "rsa", "firmware", True),
    ("RSA key exchange, whole answer", "rsa", "firmware", False),
    ("ECDHE-RSA, RSA 2048", "rsa", "TLS-ECDHE-RSA-WITH-AES-128-GCM-SHA256", True),
    ("ECDHE-ECDSA, P-256 certificates", "ec", "TLS-ECDHE-ECDSA-WITH-AES-128-GCM-SHA256",
     True),
]


def esp32_ms(instructions):
    return round(instructions * bench_esp32.ESP32_CYCLES_PER_INSTR
                 / (bench_esp32.ESP32_MHZ * 1000), 1)


def measure(valgrind, work, port, ca, cipher, gated, stage):
    """[(state, instructions)] of each poll, the deployment staged in `stage` first on the
    path (found from the current folder, as heap.port_run finds it)."""
    out = os.path.join(work, "cg.out")
    for old in glob.glob(out + "*"):
        os.unlink(old)
    cmd = [valgrind, "--tool=callgrind", "--dump-before=gc_isenabled",
           "--callgrind-out-file=" + out, sys.executable, upy.binary(),
           os.path.join(upy.ROOT, DEVICE), str(port), ca, cipher, "1" if gated else "0",
           USER, PASSWORD]
    env = upy.env()
    env["MICROPYPATH"] = ".:" + env["MICROPYPATH"]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=stage,
                          timeout=900, check=False)
    states = [line.split()[1] for line in proc.stdout.splitlines() if line.startswith("poll ")]
    if proc.returncode != 0 or "end up" not in proc.stdout:
        raise RuntimeError("the link did not connect: %s %s" % (proc.stdout[-300:],
                                                               proc.stderr[-300:]))
    parts = []
    for path in glob.glob(out + ".*"):
        with open(path) as f:
            text = f.read()
        total = next(int(line.split()[1]) for line in text.splitlines()
                     if line.startswith(("summary:", "totals:")))
        parts.append((int(path.rsplit(".", 1)[1]), total))
    parts.sort()
    # part 1 is everything before the first poll; part k+1 the k-th poll
    polls = [total for _, total in parts[1:1 + len(states)]]
    return list(zip(states, polls, strict=True))


def run(cases=CASES):
    valgrind = shutil.which("valgrind")
    missing = [name for name, found in (("valgrind", valgrind), ("openssl", shutil.which(
        "openssl"))) if not found] + ([] if broker.available() is None else ["mosquitto"])
    if missing:
        raise SystemExit("tlscost: needs %s (apt-get install %s)" % (
            ", ".join(missing), " ".join(missing)))
    rows = []
    with tempfile.TemporaryDirectory(prefix="tlscost-") as work:
        stage = os.path.join(work, "stage")
        deploy.stage(stage, mpy=True)
        ports, extra = {}, ""
        for key in ("rsa", "ec"):
            folder = os.path.join(work, key)
            os.makedirs(folder)
            broker.make_certificates(folder, key=key)
            ports[key] = broker.free_port()
            extra += broker.tls_listener_text(folder, ports[key])
        with broker.Mosquitto(os.path.join(work, "broker"), {USER: PASSWORD}, [USER],
                              extra=extra):
            for name, key, cipher, gated in cases:
                polls = measure(valgrind, work, ports[key],
                                os.path.join(work, key, "ca.der"), cipher, gated, stage)
                costs = [n for state, n in polls if state in CONNECTION]
                rows.append({"case": name, "polls": len(costs), "max_poll_instr": max(costs),
                             "total_instr": sum(costs), "max_poll_ms_esp32": esp32_ms(
                                 max(costs)), "total_ms_esp32": esp32_ms(sum(costs)),
                             "poll_instr": costs})
    return rows


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m tools.bench.tls",
                                description=__doc__.split("\n")[0])
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    rows = run()
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    print("%-44s %5s %14s %9s %14s %9s" % ("key exchange", "polls", "costliest poll",
                                           "ESP32 ms", "whole", "ESP32 ms"))
    for r in rows:
        print("%-44s %5d %14d %9.1f %14d %9.1f" % (
            r["case"], r["polls"], r["max_poll_instr"], r["max_poll_ms_esp32"],
            r["total_instr"], r["total_ms_esp32"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
