"""The allocation-free CRC-32 used for serial frames agrees with zlib's."""

import zlib

from hypothesis import given
from hypothesis import strategies as st

from boardlib.crc32 import crc32, crc32_matches, crc32_put
from tools import upy


@given(st.binary(max_size=120))
def test_put_and_match_agree_with_zlib(data):
    buf = bytearray(data) + bytearray(4)
    crc32_put(buf, len(data), buf, len(data))
    assert int.from_bytes(buf[len(data):], "little") == zlib.crc32(data)
    assert crc32(data) == zlib.crc32(data)
    assert crc32_matches(buf, len(data))
    if data:
        buf[0] ^= 0x01
        assert not crc32_matches(buf, len(data))


def test_put_allocates_nothing_on_micropython():
    code = (
        "import micropython\n"
        "from boardlib.crc32 import crc32_put, crc32_matches\n"
        "def check(buf):\n"
        "    micropython.heap_lock()\n"
        "    crc32_put(buf, 9, buf, 9)\n"
        "    ok = crc32_matches(buf, 9)\n"
        "    micropython.heap_unlock()\n"
        "    return ok\n"
        "buf = bytearray(b'123456789') + bytearray(4)\n"
        "crc32_put(buf, 9, buf, 9)\n"  # builds the table once
        "print(check(buf), bytes(buf[9:]).hex())\n"
    )
    proc = upy.run(["-c", code])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.split() == ["True", zlib.crc32(b"123456789").to_bytes(4, "little").hex()]
