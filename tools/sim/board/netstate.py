"""The network link's states by name, for the simulator, the bench and the tests (the board
itself keeps only the numbers: boardlib/netstream.py).

    from tools.sim.board import netstate
    netstate.NAMES[link.state]        # "up", "join", ...
    link.state in netstate.ON_THE_BROKER
"""

from boardlib import netstream as _m

NAMES = {_m.OFF: "off", _m.JOIN: "join", _m.DIAL: "dial", _m.LOGIN: "login",
         _m.SUBSCRIBE: "subscribe", _m.UP: "up", _m.WAIT: "wait", _m.HANDSHAKE: "handshake",
         _m.RESOLVE: "resolve"}
# The states in which the link waits on the broker (the simulator keeps real time then).
ON_THE_BROKER = (_m.RESOLVE, _m.DIAL, _m.HANDSHAKE, _m.LOGIN, _m.SUBSCRIBE)
