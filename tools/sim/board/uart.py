"""A UART for the simulated board: the slave end of a pty, on the MicroPython unix port.

    uart = PtyUART("/dev/pts/7")      # a path from tools.port.linkpipe (the device side)
    uart.write(b"...")                # every byte, like machine.UART.write
    n = uart.readinto(buf)            # what has arrived (0 when nothing), never blocks
    uart.any()                        # 1 when a read would return bytes

The same three methods as the ESP32's machine.UART, so boardlib.link runs unchanged. The
unix port's ``os`` has no read/write, so the file object does the I/O; the pty is set raw
with VMIN=0, VTIME=0, which makes a read return at once with whatever is there.
"""

import select
import termios

_VTIME = 5  # Linux index of VTIME and VMIN in the termios control characters
_VMIN = 6


class PtyUART:
    def __init__(self, path):
        self._file = open(path, "r+b")
        fd = self._file.fileno()
        # Raw by hand with TCSANOW: termios.setraw() flushes input, and the host may have
        # sent a command before the board opened its end.
        attrs = termios.tcgetattr(fd)
        attrs[0] = 0  # iflag: no CR/NL mapping, no XON/XOFF
        attrs[1] = 0  # oflag: no output processing
        attrs[3] = 0  # lflag: no echo, no line editing, no signals
        attrs[6][_VMIN] = 0
        attrs[6][_VTIME] = 0
        termios.tcsetattr(fd, termios.TCSANOW, attrs)
        self._poll = select.poll()
        self._poll.register(self._file, select.POLLIN)

    def any(self):
        # ipoll reuses the poll object as its iterator: no list is made per call
        for _ in self._poll.ipoll(0):
            return 1
        return 0

    def readinto(self, buf):
        try:
            return self._file.readinto(buf) or 0
        except OSError:  # the other end went away: nothing arrived
            return 0

    def write(self, buf):
        # The file is unbuffered; flush() would be fsync(), which a tty refuses (EINVAL).
        return self._file.write(buf)

    def close(self):
        self._file.close()
