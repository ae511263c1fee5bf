"""The frame seal of the network link (boardlib/framesign.py, docs/network.md "Frames
proven"): the viper HMAC-SHA256 on the MicroPython unix port, the same on a 32-bit
interpreter where one is at hand, and the CPython fallback all give CPython's `hmac`."""

import ast
import hashlib
import hmac
import json
import os
import random
import struct
import subprocess

import pytest
from helpers import device_value

from tools.port import upy

# Interpreters of other releases, some 32-bit (README.md there): optional; their folder
# can be named by PINBOARD_UPY_DIR.
UPY_DIR = os.environ.get("PINBOARD_UPY_DIR") or os.path.join(upy.ROOT, "..", "shared", "upy")


def cases(seed=3):
    rnd = random.Random(seed)

    def some(n):
        return bytes(rnd.randrange(256) for _ in range(n))

    out = []
    for key_len in (16, 32, 63, 64):
        for id_len in (1, 8, 32):
            for wire_len in (7, 26, 39, 61, 94):
                counter = rnd.choice((0, 1, 65535, 65536, 2**30 - 1, rnd.randrange(2**30)))
                out.append((some(key_len), some(8), some(id_len), counter, some(wire_len)))
    return out


def expected(all_cases):
    out = []
    for key, nonce, board_id, counter, wire in all_cases:
        body = struct.pack("<I", counter) + wire
        tag = hmac.new(key, nonce + board_id + body, hashlib.sha256).digest()[:10]
        out.append((body + tag).hex())
    return out


@pytest.mark.parametrize("interpreter", ["cpython", "micropython"])
def test_the_seal_is_the_truncated_hmac_of_nonce_id_counter_frame(interpreter):
    all_cases = cases()
    assert device_value(interpreter, "framesign_cases", "seal_hex", all_cases) == \
        expected(all_cases)


def command_cases(seed=5):
    """Commands as the host signs them (the whole HMAC-SHA256 of nonce | id | body), each
    with the right tag and spoilt ones: a bit flipped in the body, in the tag's last byte,
    another board's id, the tag cut short; and the longest body the board takes."""
    rnd = random.Random(seed)

    def some(n):
        return bytes(rnd.randrange(256) for _ in range(n))

    out, want = [], []
    for key_len in (16, 32, 64):
        for id_len in (1, 8, 32):
            for body_len in (15, 40, 100):
                key, nonce, board_id, body = some(key_len), some(8), some(id_len), some(body_len)
                tag = hmac.new(key, nonce + board_id + body, hashlib.sha256).digest()
                flipped = bytes([body[0] ^ 1]) + body[1:]
                other = bytes([board_id[0] ^ 0x20]) + board_id[1:]
                out += [(key, nonce, board_id, body, tag),
                        (key, nonce, board_id, flipped, tag),
                        (key, nonce, board_id, body, tag[:-1] + bytes([tag[-1] ^ 0x80])),
                        (key, nonce, other, body,
                         hmac.new(key, nonce + board_id + body, hashlib.sha256).digest()),
                        (key, nonce, board_id, body[:-1], tag[:31])]
                want += [True, False, False, False, False]
    return out, want


@pytest.mark.parametrize("interpreter", ["cpython", "micropython"])
def test_a_command_is_taken_only_with_the_whole_hmac_of_nonce_id_body(interpreter):
    # the board checks the host's commands with the seal's own HMAC (viper on MicroPython)
    all_cases, want = command_cases()
    assert device_value(interpreter, "framesign_cases", "check_results", all_cases) == want


def test_sealing_allocates_nothing():
    assert device_value("micropython", "framesign_cases", "seal_alloc", 200) == 0


def _other_interpreters():
    if not os.path.isdir(UPY_DIR):
        return []
    return sorted(name for name in os.listdir(UPY_DIR) if name.startswith("micropython-"))


@pytest.mark.parametrize("name", _other_interpreters() or ["none"])
def test_the_seal_on_other_releases_and_32_bit_words(name):
    # viper's words are the machine's: 64 bits on this port, 32 on the ESP32
    if name == "none":
        pytest.skip("no other interpreters in %s (optional; README there)" % UPY_DIR)
    binary = os.path.join(UPY_DIR, name)
    all_cases = cases(seed=4)
    commands, taken = command_cases(seed=6)
    call = json.dumps([["seal_hex", [all_cases]], ["check_results", [commands]]], default=list)
    proc = subprocess.run([binary, "-X", "heapsize=1M", "tests/device/run.py",
                           "framesign_cases", "-"], input=call, capture_output=True,
                          text=True, cwd=upy.ROOT, env=upy.env(), timeout=120)
    if proc.returncode != 0 and "cannot execute" in proc.stderr + proc.stdout:
        pytest.skip("%s does not run here: %s" % (name, proc.stderr.strip()[-200:]))
    lines = [line for line in proc.stdout.splitlines() if line.startswith("CASE ")]
    assert lines, proc.stdout + proc.stderr
    _, status, payload = ast.literal_eval(lines[0][5:])
    assert status == "ok", payload
    assert payload == expected(all_cases)
    _, status, payload = ast.literal_eval(lines[1][5:])
    assert status == "ok", payload
    assert payload == taken


SEAL_COMPILE_HEAP = 20 * 1024  # docs/performance.md, "The network link's heap"


def test_the_seal_compiles_on_a_32_bit_board_in_20_kb():
    """The board compiles the seal from its source (viper): in 20 KB of heap, in one piece
    as at power-up, on the 32-bit interpreter of the pinned release line. Its docstrings
    and CPython's signer once made that 25.9 KB, which left the link unbuilt on an ESP32's
    heap where it is built."""
    binary, why = upy.interpreter32()
    if binary is None:
        pytest.skip(why)
    code = ("from tools.sim.board.heap import pin\n"
            "kept = pin(%d)\n"
            "import boardlib.framesign\n"
            "print('compiled')\n" % SEAL_COMPILE_HEAP)
    proc = subprocess.run([binary, "-X", "heapsize=1M", "-c", code], capture_output=True,
                          text=True, cwd=upy.ROOT, env=upy.env(), timeout=120)
    if proc.returncode != 0 and "cannot execute" in proc.stderr + proc.stdout:
        pytest.skip("%s does not run here: %s" % (binary, proc.stderr.strip()[-200:]))
    assert "compiled" in proc.stdout, proc.stdout + proc.stderr
