"""The link's framing and commands (docs/protocol.md), on CPython and the unix port.

The device cases live in device/protocol_cases.py so that the same code runs on both
interpreters; here the host's independent codec (zlib CRC, its own COBS) checks them.
"""

import itertools
import struct
import tempfile
import zlib

import pytest
from helpers import device_case_tests, micropython_value, run_on_micropython
from hypothesis import given, settings
from hypothesis import strategies as st

from boardlib import cobs, link
from firmware import errors
from rules_core import Game
from rules_core.snapshot import pack_state
from tools import linkcodes
from tools.logger import frames
from tools.records.replay import record_fields

pytestmark = pytest.mark.long(7)

test_device_case = device_case_tests("protocol_cases")


@given(st.binary(max_size=600))
def test_device_and_host_cobs_agree(raw):
    out = bytearray(len(raw) + len(raw) // 254 + 1)  # the most COBS can take
    n = cobs.encode_to(raw, len(raw), out, 0)
    assert bytes(out[:n]) == frames.cobs_encode(raw)
    assert frames.cobs_decode(bytes(out[:n])) == raw
    host = bytearray(frames.cobs_encode(raw))
    assert bytes(host[:cobs.decode_in_place(host, len(host))]) == raw


def _played_game():
    game = Game("ceb", distance=(60, 60), sets=3, first=2)
    for pins, carom, fouls in ((0b00100, 0, ()), (0b11011, 1, ()), (0b00001, 0, ("rouge",))):
        game.shot(pins=pins, carom=carom, fouls=fouls)
    return game


class Sink:
    def __init__(self):
        self.written = bytearray()

    def write(self, buf):
        self.written += buf

    def readinto(self, buf):
        return None


def test_state_frame_read_by_the_host_within_96_bytes():
    game = _played_game()
    sink = Sink()
    lk = link.Link(sink, 0, boot_id=b"\xb0\x07\x00\x01")
    lk.game = 513
    lk.game_id[:] = b"\x00\x11\x22\x33\x44\x55\x66\x77"
    lk.send_state(pack_state(game), 0, game.history)
    assert len(sink.written) <= 96
    (kind, seq, payload), = frames.FrameReader().feed(bytes(sink.written))
    assert (kind, seq) == (frames.STATE, 0)
    assert frames.parse(kind, payload) == {
        "game": 513, "game_id": "0011223344556677", "boot_id": "b0070001", "stamp": 1,
        "history": 3, "history_crc": zlib.crc32(game.history.tobytes()),
        "packed": pack_state(game), "state": game.state()}


@given(st.lists(st.integers(1, 40), min_size=1, max_size=30), st.binary(max_size=50))
def test_host_reader_finds_frames_in_any_chunking(cuts, noise):
    sink = Sink()
    lk = link.Link(sink, 0)
    lk.send_hello(12, 4, 0)  # a number works for both (machine.reset_cause())
    for number in range(1, 6):
        lk.send_event(number, bytes((1, 0b101, 0, 0)), 1, 2 * number, 1, 0)
    data = noise.replace(b"\x00", b"") + bytes(sink.written)
    reader = frames.FrameReader()
    got = []
    at = 0
    for cut in itertools.cycle(cuts):
        got += reader.feed(data[at:at + cut])
        at += cut
        if at >= len(data):
            break
    assert [(kind, seq) for kind, seq, _ in got] == [(1, 0)] + [(3, n) for n in range(1, 6)]
    shot = frames.parse(*got[3][::2])
    assert (shot["index"], shot["points"]) == (3, 6)
    assert record_fields(shot["record"]) == {"pins": [1, 3], "carom": 0, "foul": [],
                                             "unset": False}


def test_host_rejects_every_single_bit_flip():
    sink = Sink()
    game = _played_game()
    link.Link(sink, 0).send_state(pack_state(game), 0, game.history)
    wire = bytes(sink.written)
    original = frames.FrameReader().feed(wire)
    for i in range(len(wire)):
        for bit in range(8):
            bad = bytearray(wire)
            bad[i] ^= 1 << bit
            reader = frames.FrameReader()
            assert reader.feed(bytes(bad)) == []  # CRC-32 catches every single-bit error
            assert reader.feed(wire) == original  # and the next frame is read as ever


FIRMWARE_ERRORS = (errors.NOTHING_TO_UNDO, errors.BAD_SETTINGS, errors.UNKNOWN_COMMAND)

command_frame = st.builds(
    lambda kind, seq, args: frames.encode(kind, seq, args),
    st.sampled_from([0x81, 0x82, 0x83, 0x84, 0x85, 0x86, 0x87, 0x00, 0x01, 0x88, 0xFF]),
    st.integers(0, 0xBEEE), st.binary(max_size=12))
fuzz_input = st.one_of(command_frame, st.binary(min_size=1, max_size=60),
                       command_frame.map(lambda f: f[:-3] + bytes([f[-3] ^ 0x40]) + f[-2:]))


@settings(max_examples=20, deadline=None)
@given(st.lists(fuzz_input, min_size=1, max_size=25))
def test_fuzzed_commands_into_the_firmware_get_answers(inputs):
    with tempfile.TemporaryDirectory() as flash:
        call = ["firmware_answers", [flash, [chunk.hex() for chunk in inputs]]]
        out, = run_on_micropython("protocol_cases", [call], heapsize="1M", timeout=60)
    answers = frames.FrameReader().feed(bytes.fromhex(micropython_value(out)))
    parsed = [(kind, frames.parse(kind, payload)) for kind, _, payload in answers]
    pings = [f for kind, f in parsed if kind == frames.ACK and f["ref"] == 0xBEEF]
    assert len(pings) == len(inputs)  # still running and answering after every input
    answered = {f["ref"] for kind, f in parsed if kind in (frames.ACK, frames.ERROR)}
    for chunk in inputs:
        for kind, seq, payload in frames.FrameReader().feed(chunk):
            assert seq in answered  # every command that arrived intact was answered
            if kind not in (0x81, 0x82, 0x83, 0x84, 0x85, 0x86, 0x87) or (
                    kind in (0x82, 0x83, 0x84, 0x85) and payload) or (
                    kind == 0x86 and len(payload) != 10) or (
                    kind == 0x87 and len(payload) != 8):
                assert (frames.ERROR, seq) in [(k, f.get("ref")) for k, f in parsed]
    assert all(
        kind != frames.ERROR or f["code"] in (1, 2, 3, 4, 5, 6) + FIRMWARE_ERRORS
        for kind, f in parsed
    )


def test_new_game_args_layout():
    assert frames.new_game_args("russian", (100, 90), 5, 2) == struct.pack(
        "<BHHBBB", 2, 100, 90, 5, 2, 0)
    assert frames.new_game_args("ddbu", (40, 40), replace=True)[-1] == linkcodes.REPLACE
    assert frames.new_game_args("ceb", (60, 60), 3, 1, teams=1)[-1] == linkcodes.TEAMS
    assert frames.new_game_args("ceb", (60, 60), 3, 1, True, 1)[-1] == linkcodes.TEAMS | 1


def test_every_foul_of_a_shot_reaches_the_host():
    # Two ordinary fouls and a rouge in one shot: a bitmask would say "foul, rouge".
    game = Game("ceb", (60, 60))
    record = game.shot(pins=0b00100, fouls=("foul", "foul", "rouge", "dehors"))
    sink = Sink()
    link.Link(sink, 0).send_event(1, record, 1, 0, 2, 0)
    ((kind, _, payload),) = frames.FrameReader().feed(bytes(sink.written))
    fields = frames.parse(kind, payload)
    assert record_fields(fields["record"]) == {
        "pins": [3], "carom": 0, "foul": ["foul", "rouge", "dehors", "foul"], "unset": False}
    replayed = Game("ceb", (60, 60))
    replayed.apply(fields["record"])
    assert replayed.state() == game.state()


def test_hello_of_another_protocol_version_is_refused_by_the_parser():
    sink = Sink()
    link.Link(sink, 0, board_id=b"x").send_hello("fw", "PWR", 0)
    ((kind, _, payload),) = frames.FrameReader().feed(bytes(sink.written))
    assert frames.parse(kind, payload)["protocol"] == linkcodes.PROTOCOL_VERSION
    for version in (0, 1, 3, 255):
        with pytest.raises(frames.UnknownProtocol):
            frames.parse(kind, bytes([version]) + payload[1:])
