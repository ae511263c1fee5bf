# Copied to the board's root as main.py: start the scoreboard.
import firmware.run

firmware.run.start()
