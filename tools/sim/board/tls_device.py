"""The network link's TLS connection, poll by poll, for tools/bench/tls.py (under callgrind).

    micropython tools/sim/board/tls_device.py PORT CA_DER CIPHER GATED USER PASSWORD

boardlib.mqttlink.NetLink with `"tls": true` against a broker's TLS listener on 127.0.0.1,
polled as the link task polls it until it is up. CIPHER replaces the one suite the link
offers (for comparison); GATED 0 gives mbedtls the broker's whole answer at once instead of
a record a poll. Before each poll it calls `gc.isenabled()`, the marker that callgrind dumps
its counts at (`--dump-before=gc_isenabled`), and after it prints `poll STATE`: the link's
state when the poll began.
"""

import gc
import sys
import time

from boardlib import mqttlink, netgate, netstream, nettls
from tools.sim.board import netstate
from tools.sim.board.wlan import FakeWLAN

_Gate = netgate.Gate


class _WholeAnswer(_Gate):
    """Every record that has arrived, in one poll: as a plain non-blocking socket."""

    def readinto(self, buf):
        n = _Gate.readinto(self, buf)
        self.allowed = True
        return n


def main(argv):
    port, ca, cipher, gated, user, password = argv
    if gated == "0":
        netgate.Gate = _WholeAnswer
    net = {"ssid": "club", "password": "pinboard", "host": "127.0.0.1", "port": int(port),
           "user": user, "pass": password, "tls": True, "key": "00" * 16, "id": user}
    ahead = [0]  # the simulated WiFi's join takes 1.5 s: skipped

    def clock():
        return time.ticks_add(time.ticks_ms(), ahead[0])

    link = mqttlink.NetLink(net, FakeWLAN(clock), time.ticks_ms(), ca_path=ca)
    # the context made ahead, as a board makes it when its game starts (firmware.startapp)
    link._tls = nettls.context(nettls.read_ca(ca), nettls.CIPHER if cipher == "firmware"
                               else cipher)
    netstream.forget("nettls")  # loaded again by the link for the handshake
    now = time.ticks_ms()
    link.poll(now)  # starts the join
    ahead[0] = 60000
    for _ in range(3000):
        state = link.state
        # the link's own timers see 10 ms a poll, however slow callgrind makes the poll
        now = time.ticks_add(now, 10)
        gc.isenabled()
        link.poll(now)
        print("poll", netstate.NAMES[state])
        if link.state == netstream.UP and not link._outbox:
            break
        if link.last_error:
            print("error", link.last_error)
            break
        time.sleep_ms(5 if state in (netstream.JOIN, netstream.WAIT) else 1)
    gc.isenabled()
    print("end", netstate.NAMES[link.state])


main(sys.argv[1:])
