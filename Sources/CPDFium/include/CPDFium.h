// PDFium's C API, loaded at run time: the functions Quire calls, declared here after PDFium's public
// headers (fpdfview.h, fpdf_text.h, fpdf_edit.h), since the library comes as a prebuilt libpdfium.so
// without them (scripts/install-pdfium). `quire_pdfium()` opens the library once per process and
// returns its function table, or NULL with the reason in `quire_pdfium_error()`; without the
// library, quire builds and runs and only PDF input is off.
//
// PDFium is not thread-safe: every call through the table must hold one process-wide lock
// (Sources/QuirePDF does).
#ifndef QUIRE_CPDFIUM_H
#define QUIRE_CPDFIUM_H

#include <stddef.h>

typedef struct quire_fpdf_document *QFPDF_DOCUMENT;
typedef struct quire_fpdf_page *QFPDF_PAGE;
typedef struct quire_fpdf_bitmap *QFPDF_BITMAP;
typedef struct quire_fpdf_textpage *QFPDF_TEXTPAGE;
typedef struct quire_fpdf_pageobject *QFPDF_PAGEOBJECT;
typedef struct quire_fpdf_xobject *QFPDF_XOBJECT;

// FPDF_GetLastError's codes.
#define QFPDF_ERR_SUCCESS 0
#define QFPDF_ERR_UNKNOWN 1
#define QFPDF_ERR_FILE 2
#define QFPDF_ERR_FORMAT 3
#define QFPDF_ERR_PASSWORD 4
#define QFPDF_ERR_SECURITY 5
#define QFPDF_ERR_PAGE 6

// FPDFPageObj_GetType's kinds.
#define QFPDF_PAGEOBJ_TEXT 1
#define QFPDF_PAGEOBJ_PATH 2
#define QFPDF_PAGEOBJ_IMAGE 3
#define QFPDF_PAGEOBJ_SHADING 4
#define QFPDF_PAGEOBJ_FORM 5

// Text render modes: 3 draws nothing (an OCR layer's invisible text), 7 only clips.
#define QFPDF_TEXTRENDERMODE_INVISIBLE 3
#define QFPDF_TEXTRENDERMODE_CLIP 7

// FPDFBitmap formats and FPDF_RenderPageBitmap flags.
#define QFPDF_BITMAP_BGRX 3
#define QFPDF_RENDER_ANNOT 0x01
#define QFPDF_RENDER_PRINTING 0x800

// FS_RECTF: a rectangle in page coordinates (points, y up).
typedef struct {
    float left;
    float top;
    float right;
    float bottom;
} quire_fs_rectf;

// FS_MATRIX: x' = a x + c y + e, y' = b x + d y + f.
typedef struct {
    float a, b, c, d, e, f;
} quire_fs_matrix;

// FPDF_SaveAsCopy's flags.
#define QFPDF_INCREMENTAL 1
#define QFPDF_NO_INCREMENTAL 2

typedef struct {
    int version;                  // 2
    const char **user_font_paths; // NULL: the system's
    void *isolate;                // V8, unused
    unsigned int v8_embedder_slot;
    void *platform;
} quire_fpdf_library_config;

typedef struct {
    void (*InitLibraryWithConfig)(const quire_fpdf_library_config *config);
    unsigned long (*GetLastError)(void);
    QFPDF_DOCUMENT (*LoadMemDocument64)(const void *data, size_t size, const char *password);
    QFPDF_DOCUMENT (*CreateNewDocument)(void);
    int (*ImportPages)(QFPDF_DOCUMENT dest, QFPDF_DOCUMENT src, const char *pagerange, int index);
    int (*SaveAsCopy)(QFPDF_DOCUMENT document, void *file_write, unsigned long flags);
    void (*CloseDocument)(QFPDF_DOCUMENT document);
    int (*GetPageCount)(QFPDF_DOCUMENT document);
    unsigned long (*GetSecurityHandlerRevision)(QFPDF_DOCUMENT document);
    int (*GetPageSizeByIndexF)(QFPDF_DOCUMENT document, int index, float size[2]);
    QFPDF_PAGE (*LoadPage)(QFPDF_DOCUMENT document, int index);
    void (*ClosePage)(QFPDF_PAGE page);
    int (*PageGetRotation)(QFPDF_PAGE page);
    float (*GetPageWidthF)(QFPDF_PAGE page);
    float (*GetPageHeightF)(QFPDF_PAGE page);
    int (*PageToDevice)(QFPDF_PAGE page, int start_x, int start_y, int size_x, int size_y, int rotate,
                        double page_x, double page_y, int *device_x, int *device_y);

    QFPDF_BITMAP (*BitmapCreateEx)(int width, int height, int format, void *first_scan, int stride);
    int (*BitmapFillRect)(QFPDF_BITMAP bitmap, int left, int top, int width, int height, unsigned long color);
    void *(*BitmapGetBuffer)(QFPDF_BITMAP bitmap);
    int (*BitmapGetStride)(QFPDF_BITMAP bitmap);
    void (*BitmapDestroy)(QFPDF_BITMAP bitmap);
    void (*RenderPageBitmap)(QFPDF_BITMAP bitmap, QFPDF_PAGE page, int start_x, int start_y, int size_x, int size_y,
                             int rotate, int flags);
    int (*RenderPageBitmapStart)(QFPDF_BITMAP bitmap, QFPDF_PAGE page, int start_x, int start_y, int size_x, int size_y,
                                 int rotate, int flags, void *pause);
    int (*RenderPageContinue)(QFPDF_PAGE page, void *pause);
    void (*RenderPageClose)(QFPDF_PAGE page);

    int (*PageCountObjects)(QFPDF_PAGE page);
    QFPDF_PAGEOBJECT (*PageGetObject)(QFPDF_PAGE page, int index);
    int (*FormObjCountObjects)(QFPDF_PAGEOBJECT form);
    QFPDF_PAGEOBJECT (*FormObjGetObject)(QFPDF_PAGEOBJECT form, unsigned long index);
    int (*PageObjGetType)(QFPDF_PAGEOBJECT object);
    int (*PageObjGetBounds)(QFPDF_PAGEOBJECT object, float *left, float *bottom, float *right, float *top);
    int (*TextObjGetTextRenderMode)(QFPDF_PAGEOBJECT text);
    int (*ImageObjGetImagePixelSize)(QFPDF_PAGEOBJECT image, unsigned int *width, unsigned int *height);

    QFPDF_TEXTPAGE (*TextLoadPage)(QFPDF_PAGE page);
    void (*TextClosePage)(QFPDF_TEXTPAGE text);
    int (*TextCountChars)(QFPDF_TEXTPAGE text);
    unsigned int (*TextGetUnicode)(QFPDF_TEXTPAGE text, int index);
    int (*TextIsGenerated)(QFPDF_TEXTPAGE text, int index);
    int (*TextGetCharBox)(QFPDF_TEXTPAGE text, int index, double *left, double *right, double *bottom, double *top);
    double (*TextGetFontSize)(QFPDF_TEXTPAGE text, int index);
    int (*TextGetLooseCharBox)(QFPDF_TEXTPAGE text, int index, quire_fs_rectf *rect);
    float (*TextGetCharAngle)(QFPDF_TEXTPAGE text, int index);
    QFPDF_PAGEOBJECT (*TextGetTextObject)(QFPDF_TEXTPAGE text, int index);
    int (*TextHasUnicodeMapError)(QFPDF_TEXTPAGE text, int index);

    int (*DeviceToPage)(QFPDF_PAGE page, int start_x, int start_y, int size_x, int size_y, int rotate,
                        int device_x, int device_y, double *page_x, double *page_y);
    QFPDF_XOBJECT (*NewXObjectFromPage)(QFPDF_DOCUMENT dest, QFPDF_DOCUMENT src, int src_page_index);
    void (*CloseXObject)(QFPDF_XOBJECT xobject);
    QFPDF_PAGEOBJECT (*NewFormObjectFromXObject)(QFPDF_XOBJECT xobject);
    int (*PageObjSetMatrix)(QFPDF_PAGEOBJECT object, const quire_fs_matrix *matrix);
    void (*PageInsertObject)(QFPDF_PAGE page, QFPDF_PAGEOBJECT object);
    int (*PageGenerateContent)(QFPDF_PAGE page);
    void (*PageObjDestroy)(QFPDF_PAGEOBJECT object);
} quire_pdfium_api;

/// The library's function table, loaded once (QUIRE_PDFIUM names the file; else
/// /opt/quire-pdfium/lib/libpdfium.so, then the loader's search path), or NULL.
const quire_pdfium_api *quire_pdfium(void);

/// Why `quire_pdfium()` returned NULL (a static string), or NULL when it did not.
const char *quire_pdfium_error(void);

/// The file the library was loaded from, or NULL.
const char *quire_pdfium_path(void);

/// Page `index` (0-based) of `source` alone, as a PDF of its own (its resources and annotations
/// with it), in a malloc'ed buffer the caller frees. 1 on success; 0 when PDFium could not.
int quire_pdfium_extract_page(const quire_pdfium_api *api, QFPDF_DOCUMENT source, int index, unsigned char **data, size_t *size);

/// Draws page `overlay_pages[i]` of `overlay` over page `pages[i]` of `document` for each of the
/// `count` placements, as a form XObject with the matrix `matrices[6 i …]` (a b c d e f), then saves
/// `document` (`flags`: QFPDF_INCREMENTAL keeps the original bytes and appends the changes) into a
/// malloc'ed buffer the caller frees. 1 on success; 0 when PDFium could not (nothing is saved).
int quire_pdfium_overlay(const quire_pdfium_api *api, QFPDF_DOCUMENT document, QFPDF_DOCUMENT overlay, int count,
                         const int *overlay_pages, const int *pages, const double *matrices, unsigned long flags,
                         unsigned char **data, size_t *size);

/// Renders `page` into `bitmap` (the whole bitmap, no rotation) progressively, giving up once
/// `seconds` have passed: PDFium pauses between page objects to ask. 0: rendered; 1: gave up (the
/// bitmap holds what was drawn by then); 2: PDFium failed.
int quire_pdfium_render(const quire_pdfium_api *api, QFPDF_BITMAP bitmap, QFPDF_PAGE page, int width, int height, int flags,
                        double seconds);

#endif
