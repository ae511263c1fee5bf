"""Two ptys joined by a relay thread, with faults on the line when asked (CPython).

    with LinkPipe(faults=Faults(bit_flip=0.001, seed=1)) as pipe:
        pipe.device_path    # the board's end: tools.sim.board.uart.PtyUART opens it
        pipe.host_path      # the host's end: a symlink, opened with pyserial like /dev/ttyUSB0
        pipe.unplug(3.0)    # the host end vanishes for 3 s, then comes back (a new pty)

Faults apply to bytes from the board to the host (and to host commands if
``faults_to_device`` is given): bit flips, dropped and doubled bytes, garbage bursts.
While unplugged, what the board sends is lost, as on a real cable.
"""

import os
import pty
import random
import select
import shutil
import tempfile
import threading
import time
import tty


class Faults:
    """Per-byte fault rates, and garbage bursts inserted between reads."""

    def __init__(self, bit_flip=0.0, drop=0.0, double=0.0, garbage=0.0, garbage_len=20,
                 seed=None):
        self.bit_flip = bit_flip
        self.drop = drop
        self.double = double
        self.garbage = garbage
        self.garbage_len = garbage_len
        self.random = random.Random(seed)
        self.counts = dict.fromkeys(("bit_flip", "drop", "double", "garbage"), 0)

    def apply(self, data):
        rnd = self.random
        out = bytearray()
        for byte in data:
            if rnd.random() < self.garbage:
                self.counts["garbage"] += 1
                out += bytes(rnd.randrange(256) for _ in range(rnd.randrange(1, self.garbage_len)))
            if rnd.random() < self.drop:
                self.counts["drop"] += 1
                continue
            if rnd.random() < self.bit_flip:
                self.counts["bit_flip"] += 1
                byte ^= 1 << rnd.randrange(8)
            out.append(byte)
            if rnd.random() < self.double:
                self.counts["double"] += 1
                out.append(byte)
        return bytes(out)


def _pty():
    master, slave = pty.openpty()
    tty.setraw(slave)
    tty.setraw(master)
    os.set_blocking(master, False)
    return master, slave


class LinkPipe:
    def __init__(self, faults=None, faults_to_device=None, directory=None, tap=None):
        self.faults = faults
        self.tap = tap  # a bytearray that gets every byte the board sent, before faults
        self.faults_to_device = faults_to_device
        self._own_dir = directory is None
        self.directory = directory or tempfile.mkdtemp(prefix="linkpipe-")
        self.host_path = os.path.join(self.directory, "host")
        self._device_master, self._device_slave = _pty()
        self.device_path = os.ttyname(self._device_slave)
        self._host_master = None
        self._host_slave = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._plug()
        self.to_host = 0
        self.to_device = 0
        self.lost = 0
        self._thread = threading.Thread(target=self._relay, daemon=True)
        self._thread.start()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _plug(self):
        master, slave = _pty()
        self._host_master, self._host_slave = master, slave
        tmp = self.host_path + ".new"
        os.symlink(os.ttyname(slave), tmp)
        os.replace(tmp, self.host_path)

    def unplug(self, seconds):
        """Take the host end away for ``seconds`` (in the background), then plug a new one."""
        with self._lock:
            os.unlink(self.host_path)
            os.close(self._host_slave)
            os.close(self._host_master)
            self._host_master = self._host_slave = None

        def replug():
            time.sleep(seconds)
            with self._lock:
                if not self._stop.is_set():
                    self._plug()

        threading.Thread(target=replug, daemon=True).start()

    def inject(self, data):
        """Write raw bytes to the host as if the board had sent them (no faults applied)."""
        with self._lock:
            if self._host_master is not None:
                self._write(self._host_master, data)

    def _write(self, fd, data, patience=2.0):
        # A reader that stops reading for longer than ``patience`` loses the rest, as a
        # real line would: the relay must never hang on it.
        view = memoryview(data)
        deadline = time.monotonic() + patience
        while view:
            try:
                view = view[os.write(fd, view):]
            except BlockingIOError:
                if time.monotonic() > deadline:
                    self.lost += len(view)
                    return
                select.select([], [fd], [], 0.05)
            except OSError:
                self.lost += len(view)
                return

    def _relay(self):
        while not self._stop.is_set():
            with self._lock:
                host = self._host_master
            fds = [self._device_master] + ([host] if host is not None else [])
            try:
                ready, _, _ = select.select(fds, [], [], 0.05)
            except (OSError, ValueError):
                continue
            with self._lock:
                host = self._host_master
                if self._device_master in ready:
                    data = self._read(self._device_master)
                    if data and host is None:
                        self.lost += len(data)
                    if data and self.tap is not None:
                        self.tap += data
                    if data and host is not None:
                        self.to_host += len(data)
                        if self.faults is not None:
                            data = self.faults.apply(data)
                        self._write(host, data)
                if host is not None and host in ready:
                    data = self._read(host)
                    if data:
                        self.to_device += len(data)
                        if self.faults_to_device is not None:
                            data = self.faults_to_device.apply(data)
                        self._write(self._device_master, data)

    @staticmethod
    def _read(fd):
        try:
            return os.read(fd, 65536)
        except (BlockingIOError, OSError):
            return b""

    def close(self):
        self._stop.set()
        self._thread.join(2)
        with self._lock:
            for fd in (self._host_master, self._host_slave, self._device_master,
                       self._device_slave):
                if fd is not None:
                    try:
                        os.close(fd)
                    except OSError:
                        pass
            self._host_master = self._host_slave = None
        if self._own_dir:
            shutil.rmtree(self.directory, ignore_errors=True)
