"""The error codes boardlib itself reports, each defined here once: the configuration's
(boardlib.config) and the network link's. firmware/errors.py names them beside the
firmware's own codes and says what each means (README, "At the table").

    from boardlib import errors
    errors.CONFIG_BAD    # 31: /board.cfg unreadable, the defaults in use
"""

try:
    from micropython import const
except ImportError:  # CPython: the integer itself
    const = int


CONFIG_BAD = const(31)  # the board configuration was unreadable: defaults in use
CONFIG_VALUE = const(32)  # a configuration value was bad: its default in use
COMMAND_REFUSED = const(63)  # network commands refused (bad signature, replayed, garbled)
WIFI = const(71)  # the WiFi could not be joined
BROKER = const(72)  # the MQTT broker could not be reached, or stopped answering
BROKER_LOGIN = const(73)  # the broker refused the board's user name or password
TLS = const(74)  # TLS: no CA certificate, or the broker's one refused
BROKER_NAME = const(75)  # the broker's name could not be looked up
TLS_MEMORY = const(76)  # TLS: the ESP32 had no memory for the connection
