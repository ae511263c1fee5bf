"""The allocation-free CRC-32 used for serial frames agrees with zlib's."""

import zlib
from array import array

from helpers import device_case_tests
from hypothesis import given
from hypothesis import strategies as st

from boardlib.crc32 import crc32, crc32_matches, crc32_more, crc32_put, crc32_reg_put


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


@given(st.binary(max_size=120), st.lists(st.integers(0, 120), max_size=4))
def test_a_register_run_on_in_pieces_agrees_with_zlib(data, cuts):
    reg = array("H", (0xFFFF, 0xFFFF))
    at = 0
    for end in sorted(min(c, len(data)) for c in cuts) + [len(data)]:
        crc32_more(data, at, end, reg)
        at = end
    out = bytearray(4)
    crc32_reg_put(reg, out, 0)
    assert int.from_bytes(out, "little") == zlib.crc32(data)


test_device_case = device_case_tests("crc32_cases", interpreters=("micropython",))
