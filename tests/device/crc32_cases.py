"""boardlib.crc32 on the unix port: filling in and checking a frame's CRC allocates nothing.

MicroPython only: `micropython.heap_lock` does not exist on CPython (test_crc32.py checks
the values there against zlib).
"""

from array import array

from boardlib.crc32 import crc32, crc32_matches, crc32_more, crc32_put, crc32_reg_put
from device.support import check, micropython_only


def case_put_allocates_nothing():
    micropython_only("micropython.heap_lock")
    import micropython

    buf = bytearray(b"123456789") + bytearray(4)
    crc32_put(buf, 9, buf, 9)  # builds the table once
    micropython.heap_lock()
    try:
        crc32_put(buf, 9, buf, 9)
        ok = crc32_matches(buf, 9)
    finally:
        micropython.heap_unlock()
    check(ok, "the CRC put in does not match")
    # CRC-32 (IEEE 802.3, zlib's) of "123456789" is 0xCBF43926, little-endian on the wire
    check(bytes(buf[9:]) == b"\x26\x39\xf4\xcb", "CRC bytes %r" % bytes(buf[9:]))


def case_a_register_runs_on_in_pieces_without_allocating():
    micropython_only("micropython.heap_lock")
    import micropython

    data = bytes(range(256)) * 4
    reg = array("H", (0xFFFF, 0xFFFF))
    out = bytearray(4)
    crc32_more(data, 0, 0, reg)
    micropython.heap_lock()
    try:
        for at in range(0, len(data), 100):
            crc32_more(data, at, min(at + 100, len(data)), reg)
        crc32_reg_put(reg, out, 0)
    finally:
        micropython.heap_unlock()
    check(out == crc32(data).to_bytes(4, "little"), "CRC in pieces %r" % bytes(out))
