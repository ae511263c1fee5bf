# Freezes the scoreboard into a custom MicroPython build for the ESP32:
#   make -C ports/esp32 BOARD=ESP32_GENERIC FROZEN_MANIFEST=/path/to/firmware/manifest.py
# Frozen bytecode runs from flash, which leaves the heap to the game.
include("$(PORT_DIR)/boards/manifest.py")
# micropython-lib's MQTT client of boardlib/mqttlink.py: the release pinned in
# upy-requirements.txt, the very files `make test` runs (`make venv` unpacks them into
# .venv/upylib), not whatever version a micropython-lib checkout has.
package("umqtt", base_path="../.venv/upylib")

package("rules_core", base_path="..")
package("boardlib", base_path="..")
package("firmware", base_path="..", opt=3)
# main.py is frozen too: the board starts the scoreboard with nothing copied to its flash.
# A frozen main.py runs instead of one on the flash (shared/runtime/pyexec.c), and it runs
# the frozen packages even when an earlier deploy left copies of them there (README).
module("main.py", opt=3)
