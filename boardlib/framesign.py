# A board's frames proven to the host over the network (docs/network.md, "Frames proven").
#
#     from boardlib.framesign import FrameSigner, OVERHEAD
#     signer = FrameSigner(key, nonce, board_id)    # key 16-64 bytes, nonce 8, id ASCII
#     message = bytearray(OVERHEAD + len(wire))
#     signer.seal(counter, wire, message)           # counter u32 LE | wire | tag
#     signer.check(command)                         # body | HMAC(key, nonce | id | body)?
#
# The tag is the first TAG bytes of HMAC-SHA256(key, nonce | id | counter | wire) (RFC 2104;
# the truncation as RFC 2104 section 5 allows it). `nonce` is new at every boot and `counter`
# numbers the link's frames from 0 at boot, so no message of one boot is ever valid again,
# and the host refuses a counter it has seen.
#
# On MicroPython the HMAC is computed here in viper, without allocating: SHA-256's
# compression over a context buffer made once, the key's inner and outer padded blocks
# compressed once at start-up (their chaining values kept), so a frame costs two or three
# compressions of the message and one of the outer block. The host's commands are checked
# the same way (`check`: the whole 32-byte tag), so the board needs no other HMAC.
# MicroPython's `hashlib` objects are allocated per use and cannot be copied, which would
# cost five compressions and four objects a frame. Elsewhere (CPython: the host tools)
# boardlib.hmac256's FrameSigner does it; the tests compare both with CPython's `hmac`.
#
# The board compiles this module from its source (viper: docs/esp32.md), which takes heap
# for a moment in proportion to the source: the docs are comments here, not docstrings,
# and CPython's signer is elsewhere (docs/performance.md, "The network link's heap").

try:
    import micropython
    from micropython import const
except ImportError:  # CPython
    micropython = None
    const = int

TAG = 10  # bytes of the HMAC kept: 80 bits (docs/network.md says why that is enough)
COUNTER = 4  # u32 little-endian, before the frame
OVERHEAD = COUNTER + TAG
NONCE = 8
MAX_ID = 32  # netconfig: an id is 1-32 characters
MAX_CHECK = 100  # a checked message's body: the context holds nonce | id | body in 3 blocks

# The context buffer, in bytes (every part on a word boundary):
_STATE = const(0)  # the chaining value being computed: 8 words
_INNER = const(32)  # after the key's inner padded block
_OUTER = const(64)  # after the key's outer padded block
_W = const(96)  # the message schedule: 64 words
_MSG = const(352)  # nonce | id | counter | wire | padding: up to 3 blocks
_LAST = const(544)  # the outer block: the inner digest and its padding
_KW = const(608)  # the round constants as native words
_ARGS = const(864)  # _compress's: where the blocks start, how many
_SIZE = const(872)

if micropython is not None:
    # SHA-256's round constants and initial chaining value (FIPS 180-4, 4.2.2 and 5.3.3).
    _K = (b"\x42\x8a\x2f\x98\x71\x37\x44\x91\xb5\xc0\xfb\xcf\xe9\xb5\xdb\xa5"
          b"\x39\x56\xc2\x5b\x59\xf1\x11\xf1\x92\x3f\x82\xa4\xab\x1c\x5e\xd5"
          b"\xd8\x07\xaa\x98\x12\x83\x5b\x01\x24\x31\x85\xbe\x55\x0c\x7d\xc3"
          b"\x72\xbe\x5d\x74\x80\xde\xb1\xfe\x9b\xdc\x06\xa7\xc1\x9b\xf1\x74"
          b"\xe4\x9b\x69\xc1\xef\xbe\x47\x86\x0f\xc1\x9d\xc6\x24\x0c\xa1\xcc"
          b"\x2d\xe9\x2c\x6f\x4a\x74\x84\xaa\x5c\xb0\xa9\xdc\x76\xf9\x88\xda"
          b"\x98\x3e\x51\x52\xa8\x31\xc6\x6d\xb0\x03\x27\xc8\xbf\x59\x7f\xc7"
          b"\xc6\xe0\x0b\xf3\xd5\xa7\x91\x47\x06\xca\x63\x51\x14\x29\x29\x67"
          b"\x27\xb7\x0a\x85\x2e\x1b\x21\x38\x4d\x2c\x6d\xfc\x53\x38\x0d\x13"
          b"\x65\x0a\x73\x54\x76\x6a\x0a\xbb\x81\xc2\xc9\x2e\x92\x72\x2c\x85"
          b"\xa2\xbf\xe8\xa1\xa8\x1a\x66\x4b\xc2\x4b\x8b\x70\xc7\x6c\x51\xa3"
          b"\xd1\x92\xe8\x19\xd6\x99\x06\x24\xf4\x0e\x35\x85\x10\x6a\xa0\x70"
          b"\x19\xa4\xc1\x16\x1e\x37\x6c\x08\x27\x48\x77\x4c\x34\xb0\xbc\xb5"
          b"\x39\x1c\x0c\xb3\x4e\xd8\xaa\x4a\x5b\x9c\xca\x4f\x68\x2e\x6f\xf3"
          b"\x74\x8f\x82\xee\x78\xa5\x63\x6f\x84\xc8\x78\x14\x8c\xc7\x02\x08"
          b"\x90\xbe\xff\xfa\xa4\x50\x6c\xeb\xbe\xf9\xa3\xf7\xc6\x71\x78\xf2")
    _H0 = (b"\x6a\x09\xe6\x67\xbb\x67\xae\x85\x3c\x6e\xf3\x72\xa5\x4f\xf5\x3a"
           b"\x51\x0e\x52\x7f\x9b\x05\x68\x8c\x1f\x83\xd9\xab\x5b\xe0\xcd\x19")

    # n big-endian words of src[at:] into ctx[to:] as native words.
    @micropython.viper
    def _be_words(src, at: int, ctx, to: int, n: int):
        s = ptr8(src)  # noqa: F821 - viper built-ins
        d = ptr32(ctx)  # noqa: F821
        w = to >> 2
        for i in range(n):
            j = at + (i << 2)
            d[w + i] = (s[j] << 24) | (s[j + 1] << 16) | (s[j + 2] << 8) | s[j + 3]

    # SHA-256's compression of ctx[_ARGS + 4] 64-byte blocks from ctx[_ARGS] into ctx's
    # state. The masks keep words at 32 bits where the machine word is longer (the unix
    # port's 64); on the ESP32 they cost an AND each. The arguments are in ctx and the
    # round's two busiest words are the first locals, so that the native emitter keeps
    # them in registers (it gives registers to a function's first locals).
    @micropython.viper
    def _compress(ctx):
        e = uint(0)  # noqa: F821
        a = uint(0)  # noqa: F821
        c = ptr32(ctx)  # noqa: F821
        b = ptr8(ctx)  # noqa: F821
        m = uint(0xFFFFFFFF)  # noqa: F821
        at = int(c[_ARGS >> 2])
        for _ in range(int(c[(_ARGS >> 2) + 1])):
            x = _W >> 2
            for i in range(16):
                j = at + (i << 2)
                c[x + i] = (b[j] << 24) | (b[j + 1] << 16) | (b[j + 2] << 8) | b[j + 3]
            at += 64
            for i in range(x + 16, x + 64):
                v = uint(c[i - 15])  # noqa: F821
                u = uint(c[i - 2])  # noqa: F821
                c[i] = (uint(c[i - 16]) + uint(c[i - 7])  # noqa: F821
                        + (((v >> 7) | (v << 25)) ^ ((v >> 18) | (v << 14)) ^ (v >> 3))
                        + (((u >> 17) | (u << 15)) ^ ((u >> 19) | (u << 13)) ^ (u >> 10)))
            a = uint(c[0])  # noqa: F821
            bb = uint(c[1])  # noqa: F821
            cc = uint(c[2])  # noqa: F821
            d = uint(c[3])  # noqa: F821
            e = uint(c[4])  # noqa: F821
            f = uint(c[5])  # noqa: F821
            g = uint(c[6])  # noqa: F821
            h = uint(c[7])  # noqa: F821
            k = _KW >> 2
            for i in range(x, x + 64):
                t1 = (h + (((e >> 6) | (e << 26)) ^ ((e >> 11) | (e << 21))
                           ^ ((e >> 25) | (e << 7)))
                      + (g ^ (e & (f ^ g))) + uint(c[k]) + uint(c[i])) & m  # noqa: F821
                k += 1
                t2 = ((((a >> 2) | (a << 30)) ^ ((a >> 13) | (a << 19))
                       ^ ((a >> 22) | (a << 10))) + ((a & bb) | (cc & (a | bb))))
                h = g
                g = f
                f = e
                e = (d + t1) & m
                d = cc
                cc = bb
                bb = a
                a = (t1 + t2) & m
            c[0] = uint(c[0]) + a  # noqa: F821
            c[1] = uint(c[1]) + bb  # noqa: F821
            c[2] = uint(c[2]) + cc  # noqa: F821
            c[3] = uint(c[3]) + d  # noqa: F821
            c[4] = uint(c[4]) + e  # noqa: F821
            c[5] = uint(c[5]) + f  # noqa: F821
            c[6] = uint(c[6]) + g  # noqa: F821
            c[7] = uint(c[7]) + h  # noqa: F821

    # HMAC-SHA256 of the message at ctx[_MSG:at] (nonce | id | ...), from the key's
    # padded blocks compressed at start-up; the digest is left in the state words.
    @micropython.viper
    def _hmac(ctx, at: int):
        c = ptr32(ctx)  # noqa: F821
        b = ptr8(ctx)  # noqa: F821
        length = at - _MSG  # of the message after the key's block
        b[at] = 0x80
        at += 1
        end = _MSG + (((length + 72) >> 6) << 6)  # whole blocks, with 0x80 and the length
        while at < end - 4:
            b[at] = 0
            at += 1
        bits = (length + 64) << 3  # the inner block counts too
        b[at] = (bits >> 24) & 0xFF
        b[at + 1] = (bits >> 16) & 0xFF
        b[at + 2] = (bits >> 8) & 0xFF
        b[at + 3] = bits & 0xFF
        for i in range(8):
            c[i] = c[(_INNER >> 2) + i]
        c[_ARGS >> 2] = _MSG
        c[(_ARGS >> 2) + 1] = (end - _MSG) >> 6
        _compress(ctx)
        for i in range(8):  # the inner digest, big-endian, into the outer block
            v = c[i]
            j = _LAST + (i << 2)
            b[j] = (v >> 24) & 0xFF
            b[j + 1] = (v >> 16) & 0xFF
            b[j + 2] = (v >> 8) & 0xFF
            b[j + 3] = v & 0xFF
            c[i] = c[(_OUTER >> 2) + i]
        c[_ARGS >> 2] = _LAST
        c[(_ARGS >> 2) + 1] = 1
        _compress(ctx)

    # out = counter | wire | tag; `prefix` bytes of nonce | id stand at ctx[_MSG:].
    @micropython.viper
    def _seal(ctx, prefix: int, counter: int, wire, out) -> int:
        c = ptr32(ctx)  # noqa: F821
        b = ptr8(ctx)  # noqa: F821
        src = ptr8(wire)  # noqa: F821
        dst = ptr8(out)  # noqa: F821
        n = int(len(wire))
        at = _MSG + prefix
        for i in range(4):
            byte = (counter >> (i << 3)) & 0xFF
            dst[i] = byte
            b[at + i] = byte
        at += 4
        for i in range(n):
            byte = src[i]
            dst[4 + i] = byte
            b[at + i] = byte
        _hmac(ctx, at + n)
        at = 4 + n
        for i in range(10):  # TAG bytes of the outer digest
            v = c[i >> 2]
            dst[at + i] = (v >> (24 - ((i & 3) << 3))) & 0xFF
        return at + 10

    # 1 when msg[n:n + 32] is the whole HMAC of nonce | id | msg[:n], else 0; every byte
    # compared whatever the first difference.
    @micropython.viper
    def _check(ctx, prefix: int, msg, n: int) -> int:
        c = ptr32(ctx)  # noqa: F821
        b = ptr8(ctx)  # noqa: F821
        src = ptr8(msg)  # noqa: F821
        at = _MSG + prefix
        for i in range(n):
            b[at + i] = src[i]
        _hmac(ctx, at + n)
        diff = 0
        for i in range(32):
            v = c[i >> 2]
            diff |= ((v >> (24 - ((i & 3) << 3))) & 0xFF) ^ src[n + i]
        return 1 if diff == 0 else 0

    class FrameSigner:
        def __init__(self, key, nonce, board_id):
            if not 1 <= len(board_id) <= MAX_ID or len(nonce) != NONCE or len(key) > 64:
                raise ValueError("nonce of 8 bytes, id of 1-32, key of at most 64")
            ctx = self._ctx = bytearray(_SIZE)
            _be_words(_K, 0, ctx, _KW, 64)
            for at, pad in ((_INNER, 0x36), (_OUTER, 0x5C)):
                for i in range(64):
                    ctx[_MSG + i] = (key[i] if i < len(key) else 0) ^ pad
                _be_words(_H0, 0, ctx, _STATE, 8)
                _be_words(b"\0\0\x01\x60\0\0\0\x01", 0, ctx, _ARGS, 2)  # _MSG, 1 block
                _compress(ctx)
                ctx[at:at + 32] = ctx[_STATE:_STATE + 32]
            # The outer block's padding never changes: a 32-byte digest after one block.
            ctx[_LAST + 32:_LAST + 64] = b"\x80" + bytes(29) + b"\x03\x00"
            prefix = bytes(nonce) + bytes(board_id)
            ctx[_MSG:_MSG + len(prefix)] = prefix
            self._prefix = len(prefix)

        # out[:OVERHEAD + len(wire)] = counter u32 LE | wire | tag; allocates nothing.
        # Returns that length.
        def seal(self, counter, wire, out):
            return _seal(self._ctx, self._prefix, counter, wire, out)

        # True when msg is body | HMAC-SHA256(key, nonce | id | body), the whole 32-byte
        # tag (a command's; at most MAX_CHECK bytes of body).
        def check(self, msg):
            n = len(msg) - 32
            return 0 <= n <= MAX_CHECK and _check(self._ctx, self._prefix, msg, n) == 1

else:  # CPython (the host tools): the same seal and check over hashlib, with this module's
    # sizes, in boardlib.hmac256 (which the board's compiler never reads)
    from boardlib.hmac256 import frame_signer

    FrameSigner = frame_signer(MAX_ID, NONCE, TAG, MAX_CHECK)
