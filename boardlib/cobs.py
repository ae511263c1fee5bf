"""Consistent Overhead Byte Stuffing: frames without 0x00 bytes, so 0x00 can end them.

    from boardlib import cobs
    out = bytearray(len(raw) + len(raw) // 254 + 1)   # the most the encoding can take
    n = cobs.encode_to(raw, len(raw), out, 0)     # out[0:n] holds no zero byte
    m = cobs.decode_in_place(out, n)              # out[:m] == raw, or -1 if malformed

Both work on caller-owned buffers and allocate nothing, so the link can frame and unframe
on the device's hot path. Encoding adds one byte per 254 bytes of input (at most), plus
one: a 67-byte frame becomes 68 bytes.
"""

try:
    import micropython
except ImportError:  # CPython: the encoder in Python, below
    micropython = None


if micropython:
    # Machine code (viper, stock MicroPython's native emitter): the link's hot path calls
    # it straight, one call a frame.
    @micropython.viper
    def encode_to(src, length: int, dst, start: int) -> int:
        # Encode src[:length] into dst from index start; returns the end index.
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

else:

    def encode_to(src, length, dst, start):
        """Encode ``src[:length]`` into ``dst`` from index ``start``; returns the end index."""
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
