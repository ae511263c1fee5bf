"""Consistent Overhead Byte Stuffing: frames without 0x00 bytes, so 0x00 can end them.

    from boardlib import cobs
    out = bytearray(cobs.max_encoded(len(raw)))
    n = cobs.encode_into(raw, len(raw), out)      # out[:n] holds no zero byte
    m = cobs.decode_in_place(out, n)              # out[:m] == raw, or -1 if malformed

Both work on caller-owned buffers and allocate nothing, so the link can frame and unframe
on the device's hot path. Encoding adds one byte per 254 bytes of input (at most), plus
one: a 67-byte frame becomes 68 bytes.
"""


def max_encoded(length):
    """Worst-case encoded size of ``length`` raw bytes (no delimiter counted)."""
    return length + length // 254 + 1


try:
    import micropython  # noqa: F401 - the viper encoder below is for MicroPython

    _ON_MICROPYTHON = True
except ImportError:  # CPython
    _ON_MICROPYTHON = False


def encode_into(src, length, dst, start=0):
    """Encode ``src[:length]`` into ``dst`` from index ``start``; returns the end index."""
    if _ON_MICROPYTHON:
        return _encode_viper(src, length, dst, start)
    code_at = start
    out = start + 1
    code = 1
    for i in range(length):
        byte = src[i]
        if byte:
            dst[out] = byte
            out += 1
            code += 1
            if code == 0xFF:
                dst[code_at] = code
                code_at = out
                out += 1
                code = 1
        else:
            dst[code_at] = code
            code_at = out
            out += 1
            code = 1
    dst[code_at] = code
    return out


if _ON_MICROPYTHON:
    # The same loop as machine code (viper, stock MicroPython's native emitter).
    @micropython.viper
    def _encode_viper(src, length: int, dst, start: int) -> int:
        s = ptr8(src)  # noqa: F821 - viper built-ins
        d = ptr8(dst)  # noqa: F821
        code_at = start
        out = start + 1
        code = 1
        for i in range(length):
            byte = s[i]
            if byte:
                d[out] = byte
                out += 1
                code += 1
                if code == 0xFF:
                    d[code_at] = code
                    code_at = out
                    out += 1
                    code = 1
            else:
                d[code_at] = code
                code_at = out
                out += 1
                code = 1
        d[code_at] = code
        return out


# encode_into with every argument given: on MicroPython the machine code itself (one call
# where encode_into makes two; a caller on the hot path takes this one)
encode_to = _encode_viper if _ON_MICROPYTHON else encode_into


def decode_in_place(buf, length):
    """Decode ``buf[:length]`` (no delimiter) over itself; returns the raw length or -1.

    Decoding never writes ahead of where it reads, so the same buffer holds the result.
    A zero byte inside, or a block that runs past the end, makes it -1 (malformed).
    """
    read = 0
    write = 0
    while read < length:
        code = buf[read]
        if code == 0 or read + code > length:
            return -1
        read += 1
        for _ in range(code - 1):
            byte = buf[read]
            if byte == 0:
                return -1
            buf[write] = byte
            write += 1
            read += 1
        if code != 0xFF and read < length:
            buf[write] = 0
            write += 1
    return write
