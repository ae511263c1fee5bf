"""ESP32-WROOM DevKit, the default wiring (the README has the table).

Pure data: firmware.hw builds the machine objects from it, the simulator builds fake ones
from the same numbers. GPIO 34-39 have no pull-ups and 6-11 belong to the flash, so the
spots and buttons sit on pins with internal pull-ups; strapping pins 0, 2 and 12 are free.
"""

NAME = "esp32-devkit"

# Spot sensors 1-5 (reading order of the plus sign, 3 = centre). A reed or hall switch to
# ground under each spot: the magnet in a standing pin closes it, so "pin standing" is 0.
SPOTS = (13, 14, 27, 26, 25)
SPOT_PULL_UP = True
SPOT_STANDING_LEVEL = 0

# Buttons to ground with the internal pull-up: pressed reads 0.
BUTTONS = {"carom": 32, "foul": 33, "ok": 4, "undo": 15}

# Display: two TM1637 modules (player 1 left, player 2 right) or one MAX7219 module.
TM1637_LEFT = {"clk": 22, "dio": 21}
TM1637_RIGHT = {"clk": 19, "dio": 23}
MAX7219 = {"spi": 2, "sck": 18, "mosi": 23, "cs": 5, "baudrate": 1000000}

# Data link to the host logger: UART2, TX 17 / RX 16, 115200 8N1.
LINK_UART = {"id": 2, "tx": 17, "rx": 16, "baudrate": 115200}

# Buzzer (optional): a passive piezo through a 100-220 Ohm resistor to GND, on a PWM pin.
# None: the default wiring has none, and /board.cfg "buzzer_pin" names one (docs/building.md
# suggests BUZZER_EXAMPLE_PIN, the one the wiring picture draws dashed). No buzzer: silent.
BUZZER_PIN = None
BUZZER_EXAMPLE_PIN = 2

# littlefs is mounted at / by MicroPython's own boot; the game lives in its own folder.
DATA_DIR = "/game"
CONFIG_PATH = "/board.cfg"
