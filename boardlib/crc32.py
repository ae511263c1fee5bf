"""CRC-32 (IEEE 802.3, the zlib/PNG polynomial) for frames and journal records.

    from boardlib.crc32 import crc32
    crc32(b"123456789")          # 0xCBF43926
    crc32(b"6789", crc32(b"12345"))   # the same, computed in two parts
    reg = array("H", (0xFFFF, 0xFFFF))  # a CRC kept as data grows (no int is made):
    crc32_more(data, 0, len(data), reg); crc32_reg_put(reg, out, at)

``crc32`` is ``binascii.crc32`` itself: C code on the ESP32 and the unix ports (every
MicroPython build with the extra features has it) as on CPython.
"""

from binascii import crc32

try:
    import micropython
except ImportError:  # CPython: the register's functions in Python, below
    micropython = None


if micropython:
    # 256 entries of 32 bits (1 KB): the register after byte n alone, from zero and without
    # the final inversion
    def _word_table():
        from array import array

        table = array("I", bytes(1024))
        one = bytearray(1)
        for n in range(256):
            one[0] = n
            table[n] = crc32(one, 0xFFFFFFFF) ^ 0xFFFFFFFF  # once, at start-up
        return table

    _TABLE = _word_table()  # made once at import: a frame's CRC then makes no call
    del _word_table  # (its code is needed no more)

    @micropython.viper  # noqa: F821 - a compiler directive, there on MicroPython only
    def crc32_put(data, length: int, out, at: int):
        """Write the CRC-32 of data[0:length] little-endian into out[at:at + 4].

        Machine code (viper: stock MicroPython's native emitter, on the ESP32 too) over
        a table of 32-bit words, the register an unsigned machine word (logical shifts):
        no slice and no long int is made, so frames sent from the poll loop allocate
        nothing, and a frame's CRC costs microseconds."""
        src = ptr8(data)  # noqa: F821 - viper built-ins
        table = ptr32(_TABLE)  # noqa: F821
        dst = ptr8(out)  # noqa: F821
        c = uint(0xFFFF)  # noqa: F821 - (0xFFFFFFFF is no small int on a 32-bit port)
        c = (c << 16) | c
        for i in range(length):
            c = (c >> 8) ^ uint(table[(c ^ src[i]) & 0xFF])  # noqa: F821
        c ^= (uint(0xFFFF) << 16) | uint(0xFFFF)  # noqa: F821
        dst[at] = c
        dst[at + 1] = c >> 8
        dst[at + 2] = c >> 16
        dst[at + 3] = c >> 24

    @micropython.viper  # noqa: F821
    def crc32_more(data, start: int, end: int, reg):
        """Run a CRC-32 register on over data[start:end]: `reg` is array("H") of its two
        16-bit halves (high, low), 0xFFFF and 0xFFFF for a CRC from the start. A CRC kept
        so grows with what is appended to data at the cost of the new bytes alone; take
        it out with crc32_reg_put."""
        src = ptr8(data)  # noqa: F821
        table = ptr32(_TABLE)  # noqa: F821
        r = ptr16(reg)  # noqa: F821
        c = (uint(r[0]) << 16) | uint(r[1])  # noqa: F821
        for i in range(start, end):
            c = (c >> 8) ^ uint(table[(c ^ src[i]) & 0xFF])  # noqa: F821
        r[0] = c >> 16
        r[1] = c & 0xFFFF

    @micropython.viper  # noqa: F821
    def crc32_reg_put(reg, out, at: int):
        """Write the CRC-32 a register run by crc32_more holds, little-endian, into
        out[at:at + 4]. (Viper: a dozen subscripts, a third of the Python's cost.)"""
        r = ptr16(reg)  # noqa: F821
        dst = ptr8(out)  # noqa: F821
        hi = r[0] ^ 0xFFFF
        lo = r[1] ^ 0xFFFF
        dst[at] = lo
        dst[at + 1] = lo >> 8
        dst[at + 2] = hi
        dst[at + 3] = hi >> 8

else:

    def crc32_more(data, start, end, reg):
        """Run a CRC-32 register on over data[start:end] (see the MicroPython version)."""
        crc = crc32(memoryview(data)[start:end], ((reg[0] << 16) | reg[1]) ^ 0xFFFFFFFF)
        crc ^= 0xFFFFFFFF
        reg[0] = crc >> 16
        reg[1] = crc & 0xFFFF

    def crc32_put(data, length, out, at):
        """Write the CRC-32 of data[0:length] little-endian into out[at:at + 4]."""
        crc = crc32(memoryview(data)[:length])
        for i in range(4):
            out[at + i] = (crc >> (8 * i)) & 0xFF


    def crc32_reg_put(reg, out, at):
        """Write the CRC-32 a register run by crc32_more holds, little-endian, into
        out[at:at + 4]."""
        hi = reg[0] ^ 0xFFFF
        lo = reg[1] ^ 0xFFFF
        out[at] = lo & 0xFF
        out[at + 1] = lo >> 8
        out[at + 2] = hi & 0xFF
        out[at + 3] = hi >> 8


_scratch = bytearray(4)


def crc32_matches(data, length):
    """True if data[length:length + 4] holds the CRC-32 of data[0:length]. Allocates nothing."""
    crc32_put(data, length, _scratch, 0)
    return (
        data[length] == _scratch[0] and data[length + 1] == _scratch[1]
        and data[length + 2] == _scratch[2] and data[length + 3] == _scratch[3]
    )

