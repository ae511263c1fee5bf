"""The network link's frame seal (boardlib/framesign.py) on either interpreter: the
messages it makes, and that sealing allocates nothing (tests/test_framesign.py)."""

from boardlib.framesign import OVERHEAD, FrameSigner
from device.support import micropython_only

HEAPSIZE = "1M"


def seal_hex(cases):
    """[[key, nonce, id, counter, wire] (bytes as lists), ...] -> the sealed messages, hex."""
    out = []
    for key, nonce, board_id, counter, wire in cases:
        signer = FrameSigner(bytes(key), bytes(nonce), bytes(board_id))
        message = bytearray(len(wire) + OVERHEAD)
        n = signer.seal(counter, memoryview(bytes(wire)), message)
        out.append("".join("%02x" % b for b in message[:n]))
    return out


def seal_alloc(seals):
    """Bytes allocated per seal of a 61-byte frame (the longest STATE), collector off."""
    micropython_only("gc.mem_alloc")
    import gc

    signer = FrameSigner(bytes(range(32)), bytes(8), b"table-12")
    wire = memoryview(bytearray(range(61)))
    message = bytearray(61 + OVERHEAD)
    signer.seal(0, wire, message)
    gc.collect()
    gc.disable()
    before = gc.mem_alloc()
    for i in range(seals):
        signer.seal(i, wire, message)
    used = gc.mem_alloc() - before
    gc.enable()
    return used // seals


def check_results(cases):
    """[[key, nonce, id, body, tag] (bytes as lists), ...] -> for each, whether the signer
    takes body | tag for a command of its own (FrameSigner.check)."""
    out = []
    for key, nonce, board_id, body, tag in cases:
        signer = FrameSigner(bytes(key), bytes(nonce), bytes(board_id))
        out.append(signer.check(bytes(body) + bytes(tag)))
    return out
