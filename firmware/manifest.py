# Freezes the scoreboard into a custom MicroPython build for the ESP32:
#   make -C ports/esp32 BOARD=ESP32_GENERIC FROZEN_MANIFEST=/path/to/firmware/manifest.py
# Frozen bytecode runs from flash, which leaves the heap to the game.
# The port's own frozen modules: asyncio, and umqtt.simple and umqtt.robust, which every
# release's manifest requires from its micropython-lib (the network link runs on each
# release's umqtt: docs/network.md). Freezing umqtt here too would put it in the build
# twice, and the build would not compile (tools/sim/board/frozen.py checks it).
include("$(PORT_DIR)/boards/manifest.py")

package("rules_core", base_path="..")
package("boardlib", base_path="..")
package("firmware", base_path="..", opt=3)
# main.py is frozen too: the board starts the scoreboard with nothing copied to its flash.
# A frozen main.py runs instead of one on the flash (shared/runtime/pyexec.c), and it runs
# the frozen packages even when an earlier deploy left copies of them there (README).
module("main.py", opt=3)
