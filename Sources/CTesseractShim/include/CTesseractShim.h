#ifndef QUIRE_TESSERACT_SHIM_H
#define QUIRE_TESSERACT_SHIM_H

/// While on (per thread), Leptonica's `pixWriteMem` asked for PNG writes Leptonica's own uncompressed
/// serialization ("spix") instead. Tesseract 5.3 stores every text line it cuts out for its line
/// recognizer with `pixWriteMem(..., IFF_PNG)` and decodes it again with `pixReadMem` a moment later
/// (`ImageData::SetPixInternal`): zlib compression that nobody keeps, 8% of a receipt's CPU time.
/// `pixReadMem` reads "spix" just as well, pixel for pixel. Tesseract 5.5 has the same fix behind its
/// TESSERACT_IMAGEDATA_AS_PIX build option; Debian 12's 5.3 has none.
///
/// Quire turns it on only around `TessBaseAPIRecognize` (see `Engine.recognize`): Quire's own PNG
/// files are written with `pixWriteMemPng`, which this does not touch.
void quire_raw_line_images(int on);

/// How many PNG writes this thread has turned into "spix" so far (tests check that Tesseract's writes
/// come through here).
unsigned long quire_raw_line_images_written(void);

/// Whether this process's `pixWriteMem` is the one in this file (the executable exports it and the
/// dynamic linker binds Tesseract's calls to it), for tests and `quire --version`.
int quire_raw_line_images_interposed(void);

/// Switches the patched Tesseract's AVX2 activations (scripts/tesseract-patches/0005, switch 0006)
/// on (1, the default) or off (0) for the whole process, so that tests can compare them with the
/// scalar loops machines without AVX2 take. Returns whether they run now (on, and the processor has
/// AVX2), or -1 when the linked Tesseract has no such switch (Debian's 5.3).
int quire_avx2_activations(int on);

/// Switches the patched Tesseract's VNNI matrix kernels (scripts/tesseract-patches/0008) on (1, the
/// default) or off (0, the AVX2 kernels) for the whole process, so that tests can compare the two.
/// Returns whether they run now (on, and the processor has AVX512-VNNI and AVX512VL), or -1 when the
/// linked Tesseract has no such switch (Debian's 5.3).
int quire_vnni(int on);

/// Switches the patched Tesseract's line-finding openings by doubling (scripts/tesseract-patches/0009)
/// on (1, the default) or off (0, Leptonica's pixOpenBrick) for the whole process, so that tests can
/// compare the two. Returns whether they run now, or -1 when the linked Tesseract has no such switch.
int quire_doubling_openings(int on);

/// Switches the patched Tesseract's class pruner that sums in lanes (scripts/tesseract-patches/0013)
/// on (1, the default) or off (0, the loop feature by feature) for the whole process, so that tests can
/// compare the two. Returns whether it runs now, or -1 when the linked Tesseract has no such switch.
int quire_lane_class_pruner(int on);

/// Switches the patched Tesseract's quick histogram and one-channel thresholding
/// (scripts/tesseract-patches/0014) on (1, the default) or off (0, the loops pixel by pixel) for the
/// whole process, so that tests can compare the two. Returns whether they run now, or -1 when the
/// linked Tesseract has no such switch.
int quire_quick_threshold(int on);

/// Switches the patched Tesseract's pixel count in a rectangle of the page's picture mask where it lies
/// (scripts/tesseract-patches/0015) on (1, the default) or off (0, the rectangle copied into an image of
/// its own and counted there) for the whole process, so that tests can compare the two. Returns whether
/// it runs now, or -1 when the linked Tesseract has no such switch.
int quire_count_in_place(int on);

/// Switches the patched Tesseract's row pointers in an integer network's `Convolve` and `Maxpool` layers
/// (scripts/tesseract-patches/0016) on (1, the default) or off (0, the per-element accessors) for the
/// whole process, so that tests can compare the two. Returns whether they run now, or -1 when the
/// linked Tesseract has no such switch.
int quire_network_rows(int on);

/// Switches the patched Tesseract's fast paths over plain rows where it traces the outlines of a page's
/// connected components (scripts/tesseract-patches/0018) on (1, the default) or off (0, pixel by pixel)
/// for the whole process, so that tests can compare the two. Returns whether they run now, or -1 when
/// the linked Tesseract has no such switch.
int quire_edge_runs(int on);

/// Switches the patched Tesseract's copy of a page's binary image, kept when a layout analysis that
/// finds columns is made (scripts/tesseract-patches/0019), on (1, the default) or off (0: `quire_resegment`
/// then finds nothing kept) for the whole process, so that tests can compare the two ways. Returns
/// whether it is kept now, or -1 when the linked Tesseract has no such switch.
int quire_keep_page_binary(int on);

/// Switches the patched Tesseract's quick check for boxes without picture pixels, where the layout
/// analysis projects its text lines (scripts/tesseract-patches/0020), on (1, the default) or off (0,
/// Leptonica's scan of every box) for the whole process, so that tests can compare the two. Returns
/// whether it runs now, or -1 when the linked Tesseract has no such switch.
int quire_empty_box_check(int on);

struct TessBaseAPI;
/// Makes the next `TessBaseAPIRecognize` of `api` segment its page again with the page segmentation
/// mode `psm`, from the binary image the last full layout analysis of the same image was made from,
/// instead of thresholding the page again (scripts/tesseract-patches/0019): 1 where done, 0 where no
/// such image is kept (set the image again), -1 when the linked Tesseract cannot.
int quire_resegment(struct TessBaseAPI *api, int psm);

struct Pix;
/// The patched Tesseract's `ImageFind::CountPixelsInRotatedBox` (0015): the black pixels of the 1-bit
/// `pix` in the box (left, bottom, right, top) clipped to the image's box, both turned by the rotation
/// (x, y) into `pix`'s frame, whose top row is the turned image box's top. For tests, which compare the
/// count in place with the copy's. -1 when the linked Tesseract has no such function.
int quire_count_in_rotated_box(struct Pix *pix, int left, int bottom, int right, int top, int image_left, int image_bottom,
                               int image_right, int image_top, float rotation_x, float rotation_y);

#endif
