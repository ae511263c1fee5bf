"""Device-side link cases, run on CPython and on the MicroPython unix port.

test_protocol.py runs every ``case_*`` here on both interpreters (on the unix port all of
them in one process). Frames are checked against docs/protocol.md:
0x00, COBS(kind, seq u16 LE, payload, CRC-32 LE of the rest), 0x00.
"""

import struct

from boardlib import cobs, link
from boardlib.crc32 import crc32
from device.support import check, micropython_only
from tools import linkcodes

HEAPSIZE = "256K"


class MemStream:
    """A UART stand-in: reads come from ``incoming`` in chunks of at most ``chunk``."""

    def __init__(self, chunk=32):
        self.incoming = bytearray()
        self.pos = 0
        self.written = bytearray()
        self.chunk = chunk

    def any(self):
        return len(self.incoming) - self.pos

    def readinto(self, buf):
        # copies in place, so that reading allocates nothing (see the heap_lock case)
        n = min(len(buf), len(self.incoming) - self.pos, self.chunk)
        if n <= 0:
            return None
        for i in range(n):
            buf[i] = self.incoming[self.pos + i]
        self.pos += n
        return n

    def write(self, buf):
        self.written += buf
        return len(buf)


def frames_of(data):
    """[(kind, seq, payload)] of every well-formed frame in ``data``; checks each CRC."""
    out = []
    for block in bytes(data).split(b"\x00"):
        if not block:
            continue
        buf = bytearray(block)
        n = cobs.decode_in_place(buf, len(buf))
        check(n >= 7, "frame too short")
        body = bytes(buf[:n - 4])
        check(struct.unpack("<I", bytes(buf[n - 4:n]))[0] == crc32(body), "bad CRC from Link")
        out.append((body[0], body[1] | body[2] << 8, body[3:]))
    return out


def error_frames(stream):
    """[(error code, sequence number of the refused command)] of the ERROR frames sent."""
    return [(p[0], p[1] | p[2] << 8) for k, _, p in frames_of(stream.written) if k == 5]


def most_encoded(length):
    """The most bytes COBS makes of `length` raw bytes: one a 254 and one (no delimiter)."""
    return length + length // 254 + 1


def command(kind, seq, args=b""):
    raw = bytes([kind, seq & 0xFF, seq >> 8]) + bytes(args)
    raw += struct.pack("<I", crc32(raw))
    out = bytearray(most_encoded(len(raw)) + 2)
    end = cobs.encode_to(raw, len(raw), out, 1)
    return bytes(out[:end + 1])


def new_link(now=0):
    stream = MemStream()
    return link.Link(stream, now, board_id=b"\x01\x02", boot_id=b"BOOT"), stream


def case_crc_check_value():
    # The CRC-32 check value of "123456789" (IEEE 802.3 / zlib) is 0xCBF43926.
    check(crc32(b"123456789") == 0xCBF43926, "native crc")
    check(crc32(b"6789", crc32(b"12345")) == 0xCBF43926, "continued")
    check(crc32(b"") == 0, "empty")


def case_cobs_roundtrip():
    samples = [b"", b"\x00", b"\x00\x00", b"\x11\x22\x00\x33", bytes(range(1, 255)),
               bytes(range(1, 256)), bytes(300), bytes([7]) * 600, b"\x00" + bytes(range(256))]
    for raw in samples:
        out = bytearray(most_encoded(len(raw)))
        n = cobs.encode_to(raw, len(raw), out, 0)
        check(n <= most_encoded(len(raw)), "encoded longer than the bound")
        check(bytes(out[:n]).find(b"\x00") < 0, "zero byte in an encoded frame")
        m = cobs.decode_in_place(out, n)
        check(bytes(out[:m]) == raw, "roundtrip of %d bytes" % len(raw))
    check(cobs.decode_in_place(bytearray(b"\x05\x01"), 2) == -1, "block past the end")
    check(cobs.decode_in_place(bytearray(b"\x02\x00"), 2) == -1, "zero inside")


def case_frames_and_sequence():
    lk, stream = new_link()
    lk.game = 7
    lk.game_id[:] = b"GAMEID01"
    lk.send_hello("1.2", "WDT", 0)
    lk.send_event(4, b"\x01\x54\x04\x02", 2, 10, 1, 0)
    lk.send_state(bytes(range(27)), 0, b"\x01\x02\x00\x00\x01\x54\x04\x02")
    lk.send_undo(1, 0)
    lk.send_error(linkcodes.ERR_SENSOR, "spot 3 stuck")
    got = frames_of(stream.written)
    check([(k, s) for k, s, _ in got] == [(1, 0), (3, 1), (2, 2), (7, 3), (5, 4)],
          "kinds and seqs")
    hello = got[0][2]
    check(hello[0] == linkcodes.PROTOCOL_VERSION == 2, "hello protocol version")
    check(hello[1:5] == b"BOOT", "hello boot id")
    check(hello[5] == 2 and hello[6:8] == b"\x01\x02", "hello board id")
    check(hello[8] == 3 and hello[9:12] == b"WDT" and hello[12:] == b"1.2", "cause, firmware")
    head = b"\x07\x00GAMEID01BOOT"
    event = got[1][2]
    check(event[:14] == head and event[14:18] == b"\x01\x00\x00\x00", "event: game, boot, stamp 1")
    check(struct.unpack("<H4sBhBB", event[18:]) == (4, b"\x01\x54\x04\x02", 2, 10, 1, 0),
          "event fields: number, the record as applied, player, points, to, not resent")
    state = got[2][2]
    check(state[:14] == head and state[14:18] == b"\x02\x00\x00\x00", "state: stamp 2")
    check(struct.unpack("<HI", state[18:24]) == (2, crc32(b"\x01\x02\x00\x00\x01\x54\x04\x02")),
          "state: history count and CRC-32")
    check(state[24:] == bytes(range(27)), "state payload")
    check(got[3][2] == head + b"\x03\x00\x00\x00\x01\x00", "undo: one event left")
    err = got[4][2]
    check(err[0] == 16 and err[1:3] == b"\xff\xff" and err[3:] == b"spot 3 stuck", "error")
    check(lk.tx_frames == 5, "tx counter")


def case_state_frame_fits_96_bytes():
    for payload in (bytes(60), bytes([0xAB]) * 60, bytes(range(60))):
        lk, stream = new_link()
        lk.game = 0
        lk.send_state(payload, 0, bytes(4000))
        check(len(stream.written) <= 96, "state frame of %d bytes" % len(stream.written))
        check(frames_of(stream.written)[0][2][24:] == payload, "payload intact")
    lk, stream = new_link()
    try:
        lk.send_state(bytes(61), 0)
    except ValueError:
        pass
    else:
        check(False, "oversized state accepted")
    check(not stream.written, "nothing sent for an oversized state")


def _state_events(lk, stream, history, cuts=None):
    """(count, CRC) the STATE frame of `history` carries, told `cuts` when given."""
    if cuts is not None:
        lk.history_cuts = cuts
    stream.written[:] = b""
    lk.send_state(b"\x00", 0, history)
    return struct.unpack("<HI", frames_of(stream.written)[0][2][18:24])


def case_state_crc_is_the_whole_historys_as_it_grows_and_is_cut():
    # The link keeps the events' CRC as the history grows; an undo (the game's cuts go up)
    # and another history start it again, so that it is always the CRC of every record.
    lk, stream = new_link()
    history = bytearray()
    cuts = 0
    played = []
    for step in range(40):
        if step % 7 == 6:  # an undo, then the same number of records, other ones
            history[-4:] = b""
            cuts += 1
        history += bytes((step, step * 3 & 0xFF, 1, 2))
        played.append(_state_events(lk, stream, history, cuts))
        check(played[-1] == (len(history) // 4, crc32(bytes(history))),
              "after step %d: %r" % (step, played[-1]))
    # two undos and two records again before the next state: the length is the same
    history[-8:] = b"\x09\x09\x09\x09\x08\x08\x08\x08"
    cuts += 2
    check(_state_events(lk, stream, history, cuts) == (len(history) // 4, crc32(bytes(history))),
          "records replaced between two states")
    other = bytearray(history)  # another game's history, as long
    other[0] ^= 1
    check(_state_events(lk, stream, other, cuts)[1] == crc32(bytes(other)), "another history")
    # a caller that never says (the network's links): the whole history every frame
    lk, stream = new_link()
    history[:4] = b"\x07\x07\x07\x07"
    check(_state_events(lk, stream, history) == (len(history) // 4, crc32(bytes(history))),
          "not told: taken whole")
    history[4:8] = b"\x06\x06\x06\x06"
    check(_state_events(lk, stream, history)[1] == crc32(bytes(history)), "not told, changed")


def case_state_crc_runs_over_a_games_history_across_its_chunks():
    # A game's history (rules_core.game.History) is kept in chunks of 128 events: the CRC
    # the link keeps runs on over each chunk's run of new records, also where a state's
    # new records begin in one chunk and end in the next, and after undos at a chunk's
    # edge (an undo leaves the record in its chunk; the next event is written over it).
    from rules_core.game import Game

    lk, stream = new_link()
    game = Game("ddbu", 9999)
    history = game.history
    for step in range(300):
        game.shot(pins=(step * 7) % 31 + 1, carom=step % 3 % 2)
        if step in (127, 130, 255):  # undos just past a chunk's edge, then play goes on
            game.undo()
            game.undo()
        if step % 5 == 4 or 125 <= step <= 131:
            got = _state_events(lk, stream, history, game.cuts)
            check(got == (history.count, crc32(history.tobytes())),
                  "after shot %d: %r" % (step, got))
    check(history.count == 294 and len(history.chunks) == 3, "three chunks for 294 events")


def case_repeated_command_is_answered_again_not_run_again():
    lk, stream = new_link()
    undo = command(0x82, 41)
    state = command(0x83, 42)
    stream.incoming += undo
    check(lk.poll(0) == linkcodes.CMD_UNDO, "the first undo reaches the firmware")
    lk.ack(lk.cmd_seq)
    stream.incoming += undo + state
    check(lk.poll(0) == linkcodes.CMD_STATE,
          "the repeat is answered by Link; the next gets through")
    lk.nack(lk.cmd_seq, linkcodes.ERR_REFUSED)
    stream.incoming += state + undo + command(0x82, 43)
    check(lk.poll(0) == linkcodes.CMD_UNDO and lk.cmd_seq == 43, "only the new undo is returned")
    lk.ack(43)
    answers = [(k, p) for k, _, p in frames_of(stream.written)]
    check(answers == [(6, b"\x29\x00\x82"), (6, b"\x29\x00\x82"), (5, b"\x05\x2a\x00"),
                      (5, b"\x05\x2a\x00"), (6, b"\x29\x00\x82"), (6, b"\x2b\x00\x82")],
          "the same answer each time: %r" % answers)
    check(lk.rx_repeats == 3 and lk.rx_frames == 3, "repeats counted, not run")
    # the same seq with other bytes is another command (a host that started counting anew)
    stream.incoming += command(0x84, 41)
    check(lk.poll(0) == linkcodes.CMD_PING and lk.cmd_seq == 41, "same seq, other command")


def case_repeats_remembered_for_eight_commands():
    lk, stream = new_link()
    for seq in range(100, 109):
        stream.incoming += command(0x82, seq)
        check(lk.poll(0) == linkcodes.CMD_UNDO, "undo %d" % seq)
        lk.ack(seq)
    stream.incoming += command(0x82, 101)
    check(lk.poll(0) == linkcodes.NONE, "one of the last eight: answered again")
    stream.incoming += command(0x82, 100)
    check(lk.poll(0) == linkcodes.CMD_UNDO, "older than the last eight: a new command")


def case_hello_on_request():
    lk, stream = new_link()
    lk.send_hello("fw", "SOFT", 0)
    lk.send_state(bytes(27), 0)
    stream.incoming += command(0x85, 9)
    check(lk.poll(0) == linkcodes.NONE, "who-are-you is answered by Link itself")
    got = frames_of(stream.written)
    check([(k, s) for k, s, _ in got] == [(1, 0), (2, 1), (6, 2), (1, 3)],
          "ack, then the hello again, counting on: %r" % [(k, s) for k, s, _ in got])
    check(got[3][2] == got[0][2], "the same hello")


def case_event_and_logged_commands():
    lk, stream = new_link()
    stream.incoming += command(0x86, 5, b"ABCDEFGH\x07\x01") + command(0x87, 6, b"12345678")
    stream.incoming += command(0x86, 7, b"ABCDEFGH")
    check(lk.poll(0) == linkcodes.CMD_EVENT and bytes(lk.cmd_game) == b"ABCDEFGH", "event game")
    check(lk.cmd_index == 263, "event number")
    lk.ack(5)
    check(lk.poll(0) == linkcodes.CMD_LOGGED and bytes(lk.cmd_game) == b"12345678", "logged")
    lk.ack(6)
    check(lk.poll(0) == linkcodes.NONE, "short event request refused")
    errors = error_frames(stream)
    check(errors == [(linkcodes.ERR_BAD_LENGTH, 7)], "bad length: %r" % errors)


def case_new_game_replace_flag():
    lk, stream = new_link()
    args = struct.pack("<BHHBB", 0, 40, 40, 1, 1)
    stream.incoming += command(0x81, 1, args) + command(0x81, 2, args + b"\x01")
    stream.incoming += command(0x81, 3, args + b"\x04")
    check(lk.poll(0) == linkcodes.CMD_NEW_GAME and not lk.replace, "no flags: ask")
    lk.nack(1, linkcodes.ERR_ASKED)
    check(lk.poll(0) == linkcodes.CMD_NEW_GAME and lk.replace, "REPLACE")
    lk.ack(2)
    check(lk.poll(0) == linkcodes.NONE, "unknown flag refused")


def case_new_game_teams_flag():
    lk, stream = new_link()
    ceb = struct.pack("<BHHBB", 1, 60, 60, 3, 2)
    stream.incoming += command(0x81, 1, ceb + bytes([linkcodes.TEAMS]))
    stream.incoming += command(0x81, 2, ceb + bytes([linkcodes.TEAMS | linkcodes.REPLACE]))
    stream.incoming += command(0x81, 3, ceb)
    # rules_core.settings.check_settings: two-man teams are played in ceb only.
    stream.incoming += command(0x81, 4, struct.pack("<BHHBBB", 0, 40, 40, 1, 1, linkcodes.TEAMS))
    check(lk.poll(0) == linkcodes.CMD_NEW_GAME and lk.teams == 1 and not lk.replace, "teams")
    check(lk.cmd_settings() == {"rules": "ceb", "distance": (60, 60), "sets": 3, "first": 2,
                                "teams": 1}, "teams in the settings the firmware takes")
    lk.ack(1)
    check(lk.poll(0) == linkcodes.CMD_NEW_GAME and lk.teams == 1 and lk.replace, "teams, REPLACE")
    lk.ack(2)
    check(lk.poll(0) == linkcodes.CMD_NEW_GAME and lk.teams == 0, "no flag: singles again")
    lk.ack(3)
    check(lk.poll(0) == linkcodes.NONE, "teams in ddbu refused")
    errors = error_frames(stream)
    check(errors == [(linkcodes.ERR_BAD_ARGUMENT, 4)], "bad argument: %r" % errors)


def case_commands_are_decoded_and_acked():
    lk, stream = new_link()
    args = struct.pack("<BHHBB", 1, 60, 50, 3, 2)
    stream.incoming += command(0x81, 300, args) + command(0x82, 301) + command(0x83, 302)
    stream.incoming += command(0x84, 303)
    check(lk.poll(0) == linkcodes.CMD_NEW_GAME and lk.cmd_seq == 300, "new game")
    check(lk.rules == "ceb" and lk.distance == [60, 50] and lk.sets == 3 and lk.first == 2,
          "new game settings")
    lk.ack(lk.cmd_seq)
    check(lk.poll(0) == linkcodes.CMD_UNDO and lk.cmd_seq == 301, "undo")
    lk.nack(lk.cmd_seq, linkcodes.ERR_REFUSED)
    check(lk.poll(0) == linkcodes.CMD_STATE and lk.cmd_seq == 302, "state")
    check(lk.poll(0) == linkcodes.CMD_PING and lk.cmd_seq == 303, "ping")
    lk.ack(lk.cmd_seq)
    check(lk.poll(0) == linkcodes.NONE, "nothing more")
    check(lk.cmd_settings() == {"rules": "ceb", "distance": (60, 50), "sets": 3, "first": 2,
                                "teams": 0},
          "settings as the firmware takes them")
    got = frames_of(stream.written)
    check(got[0][0] == linkcodes.ACK and got[0][2] == b"\x2c\x01\x81", "ack of new game")
    check(got[1][0] == linkcodes.ERROR and got[1][2] == b"\x05\x2d\x01", "nack of undo")
    check(got[2][0] == linkcodes.ACK and got[2][2] == b"\x2f\x01\x84", "ping answered")
    check(lk.rx_frames == 4 and lk.rx_bad == 0, "counters")


def case_corrupt_command_is_dropped_and_counted():
    lk, stream = new_link()
    good = command(0x82, 9)
    for i in range(1, len(good) - 1):
        for bit in (0, 3, 7):
            bad = bytearray(good)
            bad[i] ^= 1 << bit
            stream.incoming += bad
            while stream.any():
                check(lk.poll(0) != linkcodes.CMD_UNDO or bad == good, "corrupt frame accepted")
    check(lk.rx_bad > 0 and lk.rx_frames == 0, "bad frames counted")
    stream.incoming += good
    check(lk.poll(0) == linkcodes.CMD_UNDO, "a good frame still gets through")
    check(not stream.written, "no error frame before the report interval")
    lk.poll(1000)
    got = frames_of(stream.written)
    check(got[-1][0] == linkcodes.ERROR and got[-1][2][0] == linkcodes.ERR_BAD_FRAME,
          "bad frames told")
    check(got[-1][2][1:3] == b"\xff\xff", "no command referred to")


def case_malformed_commands_get_error_frames():
    lk, stream = new_link()
    stream.incoming += command(0x99, 1)                                      # unknown kind
    stream.incoming += command(0x81, 2, b"\x00\x28")                        # short args
    stream.incoming += command(0x81, 3, struct.pack("<BHHBB", 3, 40, 40, 1, 1))  # rules id
    stream.incoming += command(0x81, 4, struct.pack("<BHHBB", 0, 0, 40, 1, 1))   # distance
    stream.incoming += command(0x81, 5, struct.pack("<BHHBB", 1, 40, 40, 2, 1))  # sets
    stream.incoming += command(0x81, 6, struct.pack("<BHHBB", 1, 40, 40, 1, 3))  # first
    stream.incoming += command(0x83, 7, b"x")                                # args on state
    for _ in range(8):
        check(lk.poll(0) == linkcodes.NONE, "malformed command returned")
    errors = [(2, 1), (3, 2), (4, 3), (4, 4), (4, 5), (4, 6), (3, 7)]
    check(error_frames(stream) == errors, "error frames")
    check(lk.rx_bad == 7 and lk.rx_frames == 0, "counted")


def case_garbage_longer_than_a_frame():
    lk, stream = new_link()
    stream.incoming += b"rst:0x1 (POWERON_RESET),boot:0x13 (SPI_FAST_FLASH_BOOT)\r\n" * 3
    stream.incoming += command(0x84, 11)
    kinds = [lk.poll(0) for _ in range(12)]
    check(linkcodes.CMD_PING in kinds, "command after boot text")
    check(lk.rx_bad == 1, "the text counted once")


def case_heartbeat_when_due():
    lk, stream = new_link(100)
    lk.poll(2099)
    check(not stream.written, "early heartbeat")
    lk.poll(2100)
    got = frames_of(stream.written)
    check(len(got) == 1 and got[0][0] == linkcodes.HEARTBEAT, "heartbeat sent")
    check(struct.unpack("<IIII", got[0][2]) == (2100, 0, 0, 0), "heartbeat fields")
    lk.poll(4099)
    check(len(frames_of(stream.written)) == 1, "second heartbeat too early")
    lk.poll(4100)
    check(len(frames_of(stream.written)) == 2, "second heartbeat")


def case_heartbeat_across_tick_wrap():
    try:
        from time import ticks_add  # the port's own period (2**30 on the ESP32)

        start = ticks_add(0, -500)
    except ImportError:  # CPython: Link's fallback wraps at 2**30 like the ESP32
        start = (1 << 30) - 500
    lk, stream = new_link(start)
    lk.poll(1000)
    check(not stream.written, "wrapped tick seen as late")
    lk.poll(1500)
    check(len(frames_of(stream.written)) == 1, "heartbeat after the wrap")


def case_broken_stream_does_not_raise():
    class Broken:
        def readinto(self, buf):
            raise OSError(5)

        def write(self, buf):
            raise OSError(5)

    lk = link.Link(Broken(), 0)
    check(lk.poll(0) == linkcodes.NONE, "poll on a broken stream")
    check(lk.send_state(bytes(27), 0) is False and lk.tx_errors == 1, "write failure counted")


def case_idle_poll_allocates_nothing():
    micropython_only("micropython.heap_lock")
    import micropython

    lk, stream = new_link()
    lk.poll(0)  # the first call may intern names; the steady state is what matters
    stream.incoming += command(0x84, 5)[:-1] + b"\x17" * 40  # a frame, then noise, unfinished
    micropython.heap_lock()
    try:
        for _ in range(100):
            lk.poll(10)
        left = stream.any()
    finally:
        micropython.heap_unlock()
    check(left == 0, "the bytes were consumed")
    stream.incoming += b"\x00" + command(0x84, 6)
    check(lk.poll(10) == linkcodes.CMD_PING and lk.cmd_seq == 6, "decoding goes on afterwards")
    check(lk.rx_bad == 1, "the overlong frame counted")


def case_game_frames_take_no_frame_from_the_heap():
    # docs/performance.md, "Cutting the shot": the calls that build and send the SHOT and
    # STATE frames keep their frames within the 11 words MicroPython keeps on the C stack
    # (py/objfun.c); a bigger one is taken from the heap at every call, which in a heap
    # full of loaded code costs a search. The heap in use while the frame is written,
    # against before the call, shows any.
    micropython_only("gc.mem_alloc")
    import gc

    from rules_core.game import Game

    class Probe:
        def __init__(self):
            self.in_use = [0]

        def write(self, buf):
            self.in_use[0] = gc.mem_alloc()

    probe = Probe()
    lk = link.Link(probe, 0, boot_id=bytes(4))
    game = Game("ddbu", distance=(40, 40))
    state = bytes(27)
    record = b"\x01\x03\x00\x00"
    for pins in (3, 5):  # once before: what a frame's first send makes is made
        game.shot(pins=pins)
        lk.history_cuts = game.cuts
        gc.collect()
        before = gc.mem_alloc()
        lk.send_event(game.history.count, record, 1, 2, 1, 0)
        event = probe.in_use[0] - before
        before = gc.mem_alloc()
        lk.send_state(state, 0, game.history)
        both = (event, probe.in_use[0] - before)
    check(both == (0, 0), "bytes from the heap while SHOT and STATE were sent: %r" % (both,))


def firmware_answers(state_dir, chunks):
    """The real firmware on the simulated board, its serial link a stream fed with `chunks`
    (hex), each followed by a ping 0xBEEF; returns everything it sent, in hex."""
    import binascii

    from firmware.app import App
    from tools.sim.board.board import build

    lk, stream = new_link()
    sim = build(state_dir=state_dir)
    sim.board.link = lk
    app = App(sim.board)
    app.boot(0)
    now = 0
    for chunk in chunks:
        stream.incoming += binascii.unhexlify(chunk)
        while stream.any():
            now += 5
            app.service_link(now)
        stream.incoming += command(0x84, 0xBEEF)
        while stream.any():
            now += 5
            app.service_link(now)
    now += 5000
    app.service_link(now)
    return binascii.hexlify(stream.written).decode()
