"""The link's stream over UART0, shared with the REPL (docs/protocol.md, "UART0").

    from boardlib.replstream import ReplStream
    lk = link.Link(ReplStream(), now_ms)   # frames raw on sys.stdout, commands from sys.stdin

Loaded only by a board whose link is `uart0` (firmware/hw.py): the others never hold it.
"""


class ReplStream:
    """UART0 shared with the REPL: raw bytes through sys.stdin/stdout, Ctrl-C disabled."""

    def __init__(self):
        import select
        import sys

        import micropython

        micropython.kbd_intr(-1)  # 0x03 inside a frame must not interrupt the firmware
        self._in = sys.stdin.buffer
        self._out = sys.stdout.buffer
        self._poll = select.poll()
        self._poll.register(sys.stdin, select.POLLIN)
        self._one = bytearray(1)

    def any(self):
        for _ in self._poll.ipoll(0):
            return 1
        return 0

    def readinto(self, buf):
        count = 0
        while count < len(buf) and self.any():
            if not self._in.readinto(self._one):
                break
            buf[count] = self._one[0]
            count += 1
        return count

    def write(self, buf):
        return self._out.write(buf)

