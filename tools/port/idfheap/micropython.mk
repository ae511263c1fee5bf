# The ESP-IDF heap the ESP32 port grows its GC heap into (idfheap.c), as a user C module of
# a unix port built by `python -m tools.port.upybuild --esp32-heap`.
IDFHEAP_DIR := $(USERMOD_DIR)
SRC_USERMOD_C += $(IDFHEAP_DIR)/idfheap.c
