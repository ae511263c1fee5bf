# Every command creates .venv and installs the pinned tools by itself when needed.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cat requirements.txt upy-requirements.txt | cksum | cut -d' ' -f1)
PORT ?=
DB ?= $(HOME)/.pinboard/games.db
SIM_STATE ?= sim-state
# The suite on two computing workers, two more for the modules that race real time and two
# for those that wait on a broker or a link, one module after another on each (they mostly
# wait; tests/conftest.py says which and why); PYTEST_WORKERS= runs it all in one process.
PYTEST_WORKERS ?= -n 6 --dist loadgroup --no-loadscope-reorder

.PHONY: venv test fuzz lint sim club config deploy check log bench upy32 clean

venv: $(STAMP)

$(STAMP): requirements.txt upy-requirements.txt
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements.txt
	$(BIN)/python -m tools.port.upylib
	@rm -f $(VENV)/.installed-*
	@touch $@

lint: $(STAMP)
	$(BIN)/ruff check .

# Bytecode caches on for the test run, whatever the environment says: each of the six
# workers compiles (and pytest rewrites) every test module it collects, and the programs the
# tests start compile the tools they import; with the caches that is done once (about 20 s
# of CPU less). They are written beside the sources, in __pycache__ (ignored by git).
test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/python -m tools.testing.typecheck
	PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest $(PYTEST_WORKERS)

# The firmware fuzz at full size: 100,000 random raw inputs (make test plays 12,000);
# FUZZ_INPUTS=N for another number.
FUZZ_INPUTS ?= 100000
fuzz: $(STAMP)
	FUZZ_INPUTS=$(FUZZ_INPUTS) $(BIN)/python -m pytest tests/test_firmware_fuzz.py

sim: $(STAMP)
	$(BIN)/python -m tools.sim --state $(SIM_STATE) --db $(DB)

# The club scoreboard with simulated tables playing (docs/club.md); LISTEN=0.0.0.0:8080 for
# the club's network, PIN=... to allow writes, TABLES=N simulated tables.
TABLES ?= 4
LISTEN ?= 127.0.0.1:8080
CLUB_DB ?= club-demo.db
club: $(STAMP)
	$(BIN)/python -m tools.club --db $(CLUB_DB) --demo $(TABLES) --listen $(LISTEN) $(if $(PIN),--pin $(PIN))

# A board's /board.cfg, asked for one setting a line (docs/building.md); CHECK=1 checks it.
CFG ?= board.cfg
config: $(STAMP)
	$(BIN)/python -m tools.config $(if $(CHECK),check,ask) $(CFG)

# .mpy files by default (what fits a stock ESP32's heap, docs/building.md); SRC=1: sources.
deploy: $(STAMP)
	@test -n "$(PORT)" || { echo "usage: make deploy PORT=/dev/ttyUSB0 [SRC=1] [CA=ca.der] [CONFIG=board.cfg]" >&2; exit 2; }
	$(BIN)/python -m tools.deploy --port $(PORT) $(if $(SRC),--src) $(if $(CA),--ca $(CA)) $(if $(CONFIG),--config $(CONFIG))

check: $(STAMP)
	@test -n "$(PORT)" || { echo "usage: make check PORT=/dev/ttyUSB0" >&2; exit 2; }
	$(BIN)/python -m tools.check --port $(PORT)

log: $(STAMP)
	@test -n "$(PORT)$(MQTT)" || { echo "usage: make log PORT=/dev/ttyUSB1, or MQTT=mqtt://USER:PASSWORD@HOST:1883 [KEYS=keys.txt] (docs/network.md)" >&2; exit 2; }
	@mkdir -p "$(dir $(DB))"
	$(BIN)/python -m tools.logger $(if $(PORT),--port $(PORT)) $(if $(MQTT),--mqtt $(MQTT)) $(if $(KEYS),--keys $(KEYS)) --db $(DB) --live

bench: $(STAMP)
	$(BIN)/python -m tools.bench

# A 32-bit MicroPython unix port built from a MicroPython source tree (tools/port/upybuild.py):
# measures memory as the ESP32 would, and runs the twin's ESP32 heap (docs/esp32.md).
upy32: $(STAMP)
	@test -n "$(MICROPYTHON_SRC)" || { echo "usage: make upy32 MICROPYTHON_SRC=DIR (a MicroPython source tree; needs gcc-multilib)" >&2; exit 2; }
	$(BIN)/python -m tools.port.upybuild --src $(MICROPYTHON_SRC) --bits 32 $(if $(ESP32_HEAP),--esp32-heap)

clean:
	rm -rf $(VENV) build .pytest_cache .ruff_cache .hypothesis
