# Copied to the board's root as boot.py: keep boot quiet and quick; main.py starts the app.
import gc

gc.collect()
