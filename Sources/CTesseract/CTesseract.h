// Tesseract's C API alone: it only forward-declares Leptonica's `Pix`, which Swift then sees as an
// `OpaquePointer`; the pixels belong to the Imaging module (CLeptonica), which hands them over as one.
// The headers of the Tesseract quire links: scripts/build-tesseract's 5.5 build when it is there
// (Package.swift then links its static library), Debian's 5.3 otherwise.
#if __has_include("/opt/quire-tesseract/include/tesseract/capi.h")
#include "/opt/quire-tesseract/include/tesseract/capi.h"
#else
#include <tesseract/capi.h>
#endif
