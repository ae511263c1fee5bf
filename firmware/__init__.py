"""The ESP32 scoreboard application (see firmware.app)."""
