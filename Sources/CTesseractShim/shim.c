// See include/CTesseractShim.h: Leptonica's pixWriteMem, interposed so that Tesseract's line images
// skip a PNG round trip (and, at the end, the patched engine's AVX2 switch). Everything other than
// PNG, and every PNG write outside `quire_raw_line_images(1)`, goes to Leptonica's own function
// unchanged.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdatomic.h>
#include <leptonica/allheaders.h>
#include "CTesseractShim.h"

typedef l_ok (*write_mem_fn)(l_uint8 **, size_t *, PIX *, l_int32);

static _Thread_local int raw_line_images;
static _Thread_local unsigned long raw_line_images_written;
static _Atomic(write_mem_fn) leptonica_write_mem;

void quire_raw_line_images(int on) { raw_line_images = on; }

unsigned long quire_raw_line_images_written(void) { return raw_line_images_written; }

static write_mem_fn leptonica(void) {
    write_mem_fn fn = atomic_load_explicit(&leptonica_write_mem, memory_order_acquire);
    if (!fn) {
        fn = (write_mem_fn)dlsym(RTLD_NEXT, "pixWriteMem");
        atomic_store_explicit(&leptonica_write_mem, fn, memory_order_release);
    }
    return fn;
}

l_ok pixWriteMem(l_uint8 **pdata, size_t *psize, PIX *pix, l_int32 format) {
    if (raw_line_images && format == IFF_PNG && pix) {
        raw_line_images_written++;
        return pixWriteMemSpix(pdata, psize, pix);
    }
    write_mem_fn fn = leptonica();
    if (!fn) return 1;  // Leptonica's convention: nonzero is an error (callers then try PNM).
    return fn(pdata, psize, pix, format);
}

int quire_raw_line_images_interposed(void) {
    // Which pixWriteMem would a shared library calling it get? The first one in the global scope.
    void *global = dlsym(RTLD_DEFAULT, "pixWriteMem");
    return global == (void *)&pixWriteMem;
}

// Tesseract 5.5 as scripts/build-tesseract patches it (0006) defines this switch; Debian's 5.3 does
// not, and the weak reference is then null.
extern int quire_tesseract_avx2_activations(int on) __attribute__((weak));

int quire_avx2_activations(int on) {
    return quire_tesseract_avx2_activations ? quire_tesseract_avx2_activations(on) : -1;
}

// ...and this one (0008).
extern int quire_tesseract_vnni(int on) __attribute__((weak));

int quire_vnni(int on) {
    return quire_tesseract_vnni ? quire_tesseract_vnni(on) : -1;
}

// ...and this one (0009).
extern int quire_tesseract_doubling_openings(int on) __attribute__((weak));

int quire_doubling_openings(int on) {
    return quire_tesseract_doubling_openings ? quire_tesseract_doubling_openings(on) : -1;
}

// ...and this one (0013).
extern int quire_tesseract_lane_class_pruner(int on) __attribute__((weak));

int quire_lane_class_pruner(int on) {
    return quire_tesseract_lane_class_pruner ? quire_tesseract_lane_class_pruner(on) : -1;
}

// ...and this one (0014).
extern int quire_tesseract_quick_threshold(int on) __attribute__((weak));

int quire_quick_threshold(int on) {
    return quire_tesseract_quick_threshold ? quire_tesseract_quick_threshold(on) : -1;
}

// ...and this one (0015).
extern int quire_tesseract_count_in_place(int on) __attribute__((weak));

int quire_count_in_place(int on) {
    return quire_tesseract_count_in_place ? quire_tesseract_count_in_place(on) : -1;
}

// ...and this one (0016).
extern int quire_tesseract_network_rows(int on) __attribute__((weak));

int quire_network_rows(int on) {
    return quire_tesseract_network_rows ? quire_tesseract_network_rows(on) : -1;
}

// ...and these (0018, 0019, 0020).
extern int quire_tesseract_edge_runs(int on) __attribute__((weak));

int quire_edge_runs(int on) {
    return quire_tesseract_edge_runs ? quire_tesseract_edge_runs(on) : -1;
}

extern int quire_tesseract_keep_page_binary(int on) __attribute__((weak));

int quire_keep_page_binary(int on) {
    return quire_tesseract_keep_page_binary ? quire_tesseract_keep_page_binary(on) : -1;
}

extern int quire_tesseract_empty_box_check(int on) __attribute__((weak));

int quire_empty_box_check(int on) {
    return quire_tesseract_empty_box_check ? quire_tesseract_empty_box_check(on) : -1;
}

extern int quire_tesseract_resegment(struct TessBaseAPI *api, int psm) __attribute__((weak));

int quire_resegment(struct TessBaseAPI *api, int psm) {
    return quire_tesseract_resegment ? quire_tesseract_resegment(api, psm) : -1;
}

extern int quire_tesseract_count_in_rotated_box(struct Pix *pix, int left, int bottom, int right, int top, int image_left,
                                                int image_bottom, int image_right, int image_top, float rotation_x,
                                                float rotation_y) __attribute__((weak));

int quire_count_in_rotated_box(struct Pix *pix, int left, int bottom, int right, int top, int image_left, int image_bottom,
                               int image_right, int image_top, float rotation_x, float rotation_y) {
    if (!quire_tesseract_count_in_rotated_box) return -1;
    return quire_tesseract_count_in_rotated_box(pix, left, bottom, right, top, image_left, image_bottom, image_right,
                                                image_top, rotation_x, rotation_y);
}
