// The ESP-IDF heap an ESP32 grows MicroPython's GC heap into, played on the unix port.
//
//     import idfheap
//     idfheap.setup(57344, (35712, 15036), (57344,))  # the first area's bytes; the free
//                                                     # regions below it and above it
//     idfheap.info()      # [(total, free, largest free block, least free seen), ...]
//     h = idfheap.take(16384)  # the ESP-IDF's own allocation (WiFi, TLS), or None
//     idfheap.give(h)
//     idfheap.areas()     # [(address, pool bytes), ...]: the GC heap's areas
//
// From MicroPython 1.22 the ESP32 port starts with a small GC heap and, when an allocation
// finds no room after a collection, adds an area taken from the ESP-IDF heap
// (MICROPY_GC_SPLIT_HEAP_AUTO; py/gc.c, gc_try_add_heap): as large as the GC heap so far,
// or as the allocation, at most the largest free block of the ESP-IDF heap
// (ports/esp32/gccollect.c, gc_get_max_new_split), and an area that holds nothing again is
// given back at a collection. WiFi and TLS allocate from the same regions. Built into a
// unix port with tools/port/upybuild.py --esp32-heap; until setup() no region exists and
// the heap never grows, as on any unix port.
#include <string.h>
#include <sys/mman.h>

#include "py/gc.h"
#include "py/mperrno.h"
#include "py/mpstate.h"
#include "py/runtime.h"

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

#define MAX_REGIONS (8)
#define MAX_BLOCKS (96)
#define ALIGN (16)
#define GAP (64 * 1024)  // below the first area: the step between tries
#define PAGE (4096)

typedef struct {
    size_t at, len;
} block_t;

typedef struct {
    char *base;
    size_t size, least;
    int n;
    block_t blocks[MAX_BLOCKS];  // in address order
} region_t;

static region_t regions[MAX_REGIONS];
static int n_regions;
static size_t first_extra;  // what the unix port's first area has beyond the ESP32's
static bool placed;

static size_t round_up(size_t n, size_t to) {
    return (n + to - 1) / to * to;
}

static size_t used_in(const region_t *r) {
    size_t used = 0;
    for (int i = 0; i < r->n; i++) {
        used += r->blocks[i].len;
    }
    return used;
}

static size_t largest_in(const region_t *r) {
    size_t at = 0, best = 0;
    for (int i = 0; i <= r->n; i++) {
        size_t end = i < r->n ? r->blocks[i].at : r->size;
        if (end > at && end - at > best) {
            best = end - at;
        }
        if (i < r->n) {
            at = round_up(r->blocks[i].at + r->blocks[i].len, ALIGN);
        }
    }
    return best;
}

static void *alloc_in(region_t *r, size_t n) {
    size_t at = 0;
    if (r->n >= MAX_BLOCKS) {
        return NULL;
    }
    for (int i = 0; i <= r->n; i++) {
        size_t end = i < r->n ? r->blocks[i].at : r->size;
        if (end >= at && end - at >= n) {  // first fit
            memmove(&r->blocks[i + 1], &r->blocks[i], (r->n - i) * sizeof(block_t));
            r->blocks[i].at = at;
            r->blocks[i].len = n;
            r->n++;
            size_t free_now = r->size - used_in(r);
            if (free_now < r->least) {
                r->least = free_now;
            }
            return r->base + at;
        }
        if (i < r->n) {
            at = round_up(r->blocks[i].at + r->blocks[i].len, ALIGN);
        }
    }
    return NULL;
}

// MP_PLAT_ALLOC_HEAP: the regions in address order, the first that fits
void *idfheap_alloc(size_t n) {
    for (int i = 0; i < n_regions; i++) {
        void *p = alloc_in(&regions[i], n);
        if (p != NULL) {
            return p;
        }
    }
    return NULL;
}

// MP_PLAT_FREE_HEAP
void idfheap_free(void *p) {
    for (int i = 0; i < n_regions; i++) {
        region_t *r = &regions[i];
        for (int j = 0; j < r->n; j++) {
            if (r->base + r->blocks[j].at == (char *)p) {
                memmove(&r->blocks[j], &r->blocks[j + 1], (r->n - j - 1) * sizeof(block_t));
                r->n--;
                return;
            }
        }
    }
}

size_t gc_get_max_new_split(void) {
    size_t best = 0;
    for (int i = 0; i < n_regions; i++) {
        size_t largest = largest_in(&regions[i]);
        if (largest > best) {
            best = largest;
        }
    }
    return best;
}

// What gc_try_add_heap counts for an area of `blocks` blocks (py/gc.c): its allocation
// table, finaliser and weak-reference tables, pool and gap byte.
static size_t area_bytes(size_t blocks) {
    size_t bytes = blocks / 4 + blocks * MICROPY_BYTES_PER_GC_BLOCK + 1;
    #if MICROPY_ENABLE_FINALISER
    bytes += blocks / 8;
    #endif
    #if MICROPY_PY_WEAKREF
    bytes += blocks / 8;
    #endif
    return bytes;
}

// The blocks gc_init makes of a first area of `bytes` (py/gc.c, gc_setup_area).
static size_t first_blocks(size_t bytes) {
    size_t per_table_byte = 1 + 4 * MICROPY_BYTES_PER_GC_BLOCK;
    size_t fraction_bits = 8 * per_table_byte;
    #if MICROPY_ENABLE_FINALISER
    fraction_bits += 4;
    #endif
    #if MICROPY_PY_WEAKREF
    fraction_bits += 4;
    #endif
    return (bytes - 1) * 8 / fraction_bits * 4;
}

// The heap the GC doubles to counts the ESP32's first area, not the unix port's, which
// also holds the simulator's own modules (patched into py/gc.c's gc_try_add_heap by
// tools/port/upybuild.py --esp32-heap).
size_t idfheap_doubling(size_t total_heap) {
    return total_heap > first_extra ? total_heap - first_extra : 0;
}

// A mapping of `size` bytes at the first free address from `want` on, a step at a time
// (upwards, or downwards with a negative step): the regions lie where the ESP32's do
// against its first area; anywhere, as a last resort (setup then returns False).
static char *map_near(size_t want, size_t size, long step) {
    size_t len = round_up(size, PAGE);
    for (int tries = 0; tries < 4096; tries++, want += step) {
        char *got = mmap((char *)want, len, PROT_READ | PROT_WRITE,
            MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
        if (got == (char *)want) {
            return got;
        }
        if (got != MAP_FAILED) {  // a kernel that took the address as a hint only
            munmap(got, len);
        }
    }
    placed = false;
    char *got = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (got == MAP_FAILED) {
        mp_raise_OSError(MP_ENOMEM);
    }
    return got;
}

static void add_region(char *base, size_t size) {
    region_t *r = &regions[n_regions++];
    r->base = base;
    r->size = size;
    r->least = size;
    r->n = 0;
}

// setup(initial, below, above): `initial` the ESP32's first GC area in bytes; `below` and
// `above` the free regions of the ESP-IDF heap, each in address order, below and above
// the first area. Returns True when they lie where asked, else False (placed anywhere).
static mp_obj_t idfheap_setup(mp_obj_t initial_in, mp_obj_t below_in, mp_obj_t above_in) {
    if (n_regions) {
        mp_raise_ValueError(MP_ERROR_TEXT("set up once"));
    }
    size_t n_below, n_above;
    mp_obj_t *below, *above;
    mp_obj_get_array(below_in, &n_below, &below);
    mp_obj_get_array(above_in, &n_above, &above);
    if (n_below + n_above > MAX_REGIONS) {
        mp_raise_ValueError(MP_ERROR_TEXT("too many regions"));
    }
    mp_state_mem_area_t *first = &MP_STATE_MEM(area);
    size_t ours = first->gc_alloc_table_byte_len * 4;
    size_t theirs = first_blocks(mp_obj_get_int(initial_in));
    first_extra = ours > theirs ? area_bytes(ours) - area_bytes(theirs) : 0;
    placed = true;
    // below: from the last, each below the one after it; above: each above the last
    size_t low = (size_t)first->gc_alloc_table_start / PAGE * PAGE;
    char *at[MAX_REGIONS];
    for (size_t i = n_below; i-- > 0;) {
        size_t len = round_up(mp_obj_get_int(below[i]), PAGE);
        at[i] = map_near(low - GAP - len, len, -(long)GAP);
        low = (size_t)at[i];
    }
    for (size_t i = 0; i < n_below; i++) {
        add_region(at[i], mp_obj_get_int(below[i]));
    }
    size_t high = round_up((size_t)first->gc_pool_end, PAGE);
    for (size_t i = 0; i < n_above; i++) {
        size_t size = mp_obj_get_int(above[i]);
        char *base = map_near(high + PAGE, size, PAGE);
        add_region(base, size);
        high = (size_t)base + round_up(size, PAGE);
    }
    return mp_obj_new_bool(placed);
}
static MP_DEFINE_CONST_FUN_OBJ_3(idfheap_setup_obj, idfheap_setup);

static mp_obj_t idfheap_info(void) {
    mp_obj_t list = mp_obj_new_list(0, NULL);
    for (int i = 0; i < n_regions; i++) {
        const region_t *r = &regions[i];
        mp_obj_t item[4] = {
            mp_obj_new_int(r->size), mp_obj_new_int(r->size - used_in(r)),
            mp_obj_new_int(largest_in(r)), mp_obj_new_int(r->least),
        };
        mp_obj_list_append(list, mp_obj_new_tuple(4, item));
    }
    return list;
}
static MP_DEFINE_CONST_FUN_OBJ_0(idfheap_info_obj, idfheap_info);

static mp_obj_t idfheap_areas(void) {
    mp_obj_t list = mp_obj_new_list(0, NULL);
    for (mp_state_mem_area_t *a = &MP_STATE_MEM(area); a != NULL; a = a->next) {
        mp_obj_t item[2] = {
            mp_obj_new_int_from_uint((uintptr_t)a->gc_pool_start),
            mp_obj_new_int(a->gc_pool_end - a->gc_pool_start),
        };
        mp_obj_list_append(list, mp_obj_new_tuple(2, item));
    }
    return list;
}
static MP_DEFINE_CONST_FUN_OBJ_0(idfheap_areas_obj, idfheap_areas);

static mp_obj_t idfheap_take(mp_obj_t n) {
    void *p = idfheap_alloc(round_up(mp_obj_get_int(n), ALIGN));
    return p == NULL ? mp_const_none : mp_obj_new_int_from_uint((uintptr_t)p);
}
static MP_DEFINE_CONST_FUN_OBJ_1(idfheap_take_obj, idfheap_take);

static mp_obj_t idfheap_give(mp_obj_t handle) {
    idfheap_free((void *)(uintptr_t)mp_obj_get_int_truncated(handle));
    return mp_const_none;
}
static MP_DEFINE_CONST_FUN_OBJ_1(idfheap_give_obj, idfheap_give);

static const mp_rom_map_elem_t idfheap_globals_table[] = {
    { MP_ROM_QSTR(MP_QSTR___name__), MP_ROM_QSTR(MP_QSTR_idfheap) },
    { MP_ROM_QSTR(MP_QSTR_setup), MP_ROM_PTR(&idfheap_setup_obj) },
    { MP_ROM_QSTR(MP_QSTR_info), MP_ROM_PTR(&idfheap_info_obj) },
    { MP_ROM_QSTR(MP_QSTR_areas), MP_ROM_PTR(&idfheap_areas_obj) },
    { MP_ROM_QSTR(MP_QSTR_take), MP_ROM_PTR(&idfheap_take_obj) },
    { MP_ROM_QSTR(MP_QSTR_give), MP_ROM_PTR(&idfheap_give_obj) },
};
static MP_DEFINE_CONST_DICT(idfheap_globals, idfheap_globals_table);

const mp_obj_module_t idfheap_module = {
    .base = { &mp_type_module },
    .globals = (mp_obj_dict_t *)&idfheap_globals,
};

MP_REGISTER_MODULE(MP_QSTR_idfheap, idfheap_module);
