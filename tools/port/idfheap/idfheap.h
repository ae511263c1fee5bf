// Included first into every C file of a unix port built with --esp32-heap
// (tools/port/upybuild.py): the GC heap grows on demand, as the ESP32 port's does
// (ports/esp32/mpconfigport.h: MICROPY_GC_SPLIT_HEAP_AUTO), into the regions idfheap.c
// plays for the ESP-IDF's heap.
#include <stddef.h>

void *idfheap_alloc(size_t n);
void idfheap_free(void *p);
size_t idfheap_doubling(size_t total_heap);

#define MICROPY_GC_SPLIT_HEAP (1)
#define MICROPY_GC_SPLIT_HEAP_N_HEAPS (1)
#define MICROPY_GC_SPLIT_HEAP_AUTO (1)
#define MP_PLAT_ALLOC_HEAP(size) idfheap_alloc(size)
#define MP_PLAT_FREE_HEAP(ptr) idfheap_free(ptr)
