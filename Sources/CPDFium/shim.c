// See include/CPDFium.h: PDFium opened with dlopen once, its functions looked up by name into a table.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "CPDFium.h"

static quire_pdfium_api api;
static const quire_pdfium_api *loaded;
static char error_text[512];
static char loaded_path[512];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static int bind_symbol(void *handle, void **slot, const char *name) {
    *slot = dlsym(handle, name);
    if (*slot) return 1;
    snprintf(error_text, sizeof error_text, "%s has no %s (PDFium too old?)", loaded_path, name);
    return 0;
}

static void load(void) {
    const char *candidates[3] = {getenv("QUIRE_PDFIUM"), "/opt/quire-pdfium/lib/libpdfium.so", "libpdfium.so"};
    void *handle = NULL;
    for (int i = 0; i < 3 && !handle; i++) {
        if (!candidates[i] || !candidates[i][0]) continue;
        handle = dlopen(candidates[i], RTLD_NOW | RTLD_LOCAL);
        if (handle) snprintf(loaded_path, sizeof loaded_path, "%s", candidates[i]);
        if (i == 0 && !handle) {  // a named file that does not load is an error, not a reason to look elsewhere
            snprintf(error_text, sizeof error_text, "QUIRE_PDFIUM=%s: %s", candidates[0], dlerror());
            return;
        }
    }
    if (!handle) {
        snprintf(error_text, sizeof error_text, "no libpdfium.so (scripts/install-pdfium installs it in /opt/quire-pdfium)");
        return;
    }
#define BIND(field, name) if (!bind_symbol(handle, (void **)&api.field, name)) { dlclose(handle); loaded_path[0] = 0; return; }
    BIND(InitLibraryWithConfig, "FPDF_InitLibraryWithConfig")
    BIND(GetLastError, "FPDF_GetLastError")
    BIND(LoadMemDocument64, "FPDF_LoadMemDocument64")
    BIND(CreateNewDocument, "FPDF_CreateNewDocument")
    BIND(ImportPages, "FPDF_ImportPages")
    BIND(SaveAsCopy, "FPDF_SaveAsCopy")
    BIND(CloseDocument, "FPDF_CloseDocument")
    BIND(GetPageCount, "FPDF_GetPageCount")
    BIND(GetSecurityHandlerRevision, "FPDF_GetSecurityHandlerRevision")
    BIND(GetPageSizeByIndexF, "FPDF_GetPageSizeByIndexF")
    BIND(LoadPage, "FPDF_LoadPage")
    BIND(ClosePage, "FPDF_ClosePage")
    BIND(PageGetRotation, "FPDFPage_GetRotation")
    BIND(GetPageWidthF, "FPDF_GetPageWidthF")
    BIND(GetPageHeightF, "FPDF_GetPageHeightF")
    BIND(PageToDevice, "FPDF_PageToDevice")
    BIND(BitmapCreateEx, "FPDFBitmap_CreateEx")
    BIND(BitmapFillRect, "FPDFBitmap_FillRect")
    BIND(BitmapGetBuffer, "FPDFBitmap_GetBuffer")
    BIND(BitmapGetStride, "FPDFBitmap_GetStride")
    BIND(BitmapDestroy, "FPDFBitmap_Destroy")
    BIND(RenderPageBitmap, "FPDF_RenderPageBitmap")
    BIND(RenderPageBitmapStart, "FPDF_RenderPageBitmap_Start")
    BIND(RenderPageContinue, "FPDF_RenderPage_Continue")
    BIND(RenderPageClose, "FPDF_RenderPage_Close")
    BIND(PageCountObjects, "FPDFPage_CountObjects")
    BIND(PageGetObject, "FPDFPage_GetObject")
    BIND(FormObjCountObjects, "FPDFFormObj_CountObjects")
    BIND(FormObjGetObject, "FPDFFormObj_GetObject")
    BIND(PageObjGetType, "FPDFPageObj_GetType")
    BIND(PageObjGetBounds, "FPDFPageObj_GetBounds")
    BIND(TextObjGetTextRenderMode, "FPDFTextObj_GetTextRenderMode")
    BIND(ImageObjGetImagePixelSize, "FPDFImageObj_GetImagePixelSize")
    BIND(TextLoadPage, "FPDFText_LoadPage")
    BIND(TextClosePage, "FPDFText_ClosePage")
    BIND(TextCountChars, "FPDFText_CountChars")
    BIND(TextGetUnicode, "FPDFText_GetUnicode")
    BIND(TextIsGenerated, "FPDFText_IsGenerated")
    BIND(TextGetCharBox, "FPDFText_GetCharBox")
    BIND(TextGetFontSize, "FPDFText_GetFontSize")
    BIND(TextGetLooseCharBox, "FPDFText_GetLooseCharBox")
    BIND(TextGetCharAngle, "FPDFText_GetCharAngle")
    BIND(TextGetTextObject, "FPDFText_GetTextObject")
    BIND(TextHasUnicodeMapError, "FPDFText_HasUnicodeMapError")
    BIND(DeviceToPage, "FPDF_DeviceToPage")
    BIND(NewXObjectFromPage, "FPDF_NewXObjectFromPage")
    BIND(CloseXObject, "FPDF_CloseXObject")
    BIND(NewFormObjectFromXObject, "FPDF_NewFormObjectFromXObject")
    BIND(PageObjSetMatrix, "FPDFPageObj_SetMatrix")
    BIND(PageInsertObject, "FPDFPage_InsertObject")
    BIND(PageGenerateContent, "FPDFPage_GenerateContent")
    BIND(PageObjDestroy, "FPDFPageObj_Destroy")
#undef BIND
    quire_fpdf_library_config config = {2, NULL, NULL, 0, NULL};
    api.InitLibraryWithConfig(&config);
    loaded = &api;
}

const quire_pdfium_api *quire_pdfium(void) {
    pthread_once(&once, load);
    return loaded;
}

const char *quire_pdfium_error(void) {
    pthread_once(&once, load);
    return loaded ? NULL : error_text;
}

const char *quire_pdfium_path(void) {
    pthread_once(&once, load);
    return loaded ? loaded_path : NULL;
}

// IFSDK_PAUSE as fpdf_progressive.h lays it out, followed by the deadline it checks.
typedef struct pause {
    int version;  // 1
    int (*need_to_pause_now)(struct pause *self);
    void *user;
    struct timespec deadline;
} pause_t;

static int now_past(const struct timespec *deadline) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return now.tv_sec > deadline->tv_sec || (now.tv_sec == deadline->tv_sec && now.tv_nsec >= deadline->tv_nsec);
}

static int need_to_pause_now(pause_t *self) { return now_past(&self->deadline); }

enum { RENDER_READY = 0, RENDER_TOBECONTINUED = 1, RENDER_DONE = 2, RENDER_FAILED = 3 };

int quire_pdfium_render(const quire_pdfium_api *api, QFPDF_BITMAP bitmap, QFPDF_PAGE page, int width, int height, int flags,
                        double seconds) {
    pause_t pause = {1, need_to_pause_now, NULL, {0, 0}};
    clock_gettime(CLOCK_MONOTONIC, &pause.deadline);
    long long nanos = (long long)(seconds * 1e9);
    pause.deadline.tv_sec += nanos / 1000000000LL;
    pause.deadline.tv_nsec += nanos % 1000000000LL;
    if (pause.deadline.tv_nsec >= 1000000000L) {
        pause.deadline.tv_sec += 1;
        pause.deadline.tv_nsec -= 1000000000L;
    }
    int status = api->RenderPageBitmapStart(bitmap, page, 0, 0, width, height, 0, flags, &pause);
    // PDFium pauses when asked and returns TOBECONTINUED; past the deadline there is nothing to continue for.
    while (status == RENDER_TOBECONTINUED && !now_past(&pause.deadline)) {
        status = api->RenderPageContinue(page, &pause);
    }
    api->RenderPageClose(page);
    if (status == RENDER_DONE) return 0;
    if (status == RENDER_TOBECONTINUED) return 1;
    return 2;
}

// FPDF_FILEWRITE as fpdf_save.h lays it out, followed by the growing buffer it writes to.
typedef struct file_write {
    int version;  // 1
    int (*write_block)(struct file_write *self, const void *data, unsigned long size);
    unsigned char *data;
    size_t size, capacity;
    int failed;
} file_write_t;

static int write_block(file_write_t *self, const void *data, unsigned long size) {
    if (self->size + size > self->capacity) {
        size_t capacity = self->capacity ? self->capacity : 64 * 1024;
        while (capacity < self->size + size) capacity *= 2;
        unsigned char *grown = realloc(self->data, capacity);
        if (!grown) { self->failed = 1; return 0; }
        self->data = grown;
        self->capacity = capacity;
    }
    memcpy(self->data + self->size, data, size);
    self->size += size;
    return 1;
}

int quire_pdfium_extract_page(const quire_pdfium_api *api, QFPDF_DOCUMENT source, int index, unsigned char **data, size_t *size) {
    *data = NULL;
    *size = 0;
    QFPDF_DOCUMENT single = api->CreateNewDocument();
    if (!single) return 0;
    char range[32];
    snprintf(range, sizeof range, "%d", index + 1);
    file_write_t out = {1, write_block, NULL, 0, 0, 0};
    int ok = api->ImportPages(single, source, range, 0) && api->SaveAsCopy(single, &out, 0) && !out.failed;
    api->CloseDocument(single);
    if (!ok) { free(out.data); return 0; }
    *data = out.data;
    *size = out.size;
    return 1;
}

int quire_pdfium_overlay(const quire_pdfium_api *api, QFPDF_DOCUMENT document, QFPDF_DOCUMENT overlay, int count,
                         const int *overlay_pages, const int *pages, const double *matrices, unsigned long flags,
                         unsigned char **data, size_t *size) {
    *data = NULL;
    *size = 0;
    for (int i = 0; i < count; i++) {
        QFPDF_XOBJECT xobject = api->NewXObjectFromPage(document, overlay, overlay_pages[i]);
        if (!xobject) return 0;
        QFPDF_PAGEOBJECT form = api->NewFormObjectFromXObject(xobject);
        // Form objects made from it stay valid once the handle is closed (fpdf_ppo.h).
        api->CloseXObject(xobject);
        if (!form) return 0;
        const double *m = matrices + 6 * i;
        quire_fs_matrix matrix = {(float)m[0], (float)m[1], (float)m[2], (float)m[3], (float)m[4], (float)m[5]};
        QFPDF_PAGE page = api->LoadPage(document, pages[i]);
        if (!page || !api->PageObjSetMatrix(form, &matrix)) {
            if (page) api->ClosePage(page);
            api->PageObjDestroy(form);  // never inserted: ours to free
            return 0;
        }
        api->PageInsertObject(page, form);
        int generated = api->PageGenerateContent(page);
        api->ClosePage(page);
        if (!generated) return 0;
    }
    file_write_t out = {1, write_block, NULL, 0, 0, 0};
    if (!api->SaveAsCopy(document, &out, flags) || out.failed) {
        free(out.data);
        return 0;
    }
    *data = out.data;
    *size = out.size;
    return 1;
}
