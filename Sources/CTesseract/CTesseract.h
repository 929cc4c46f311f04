// Leptonica first: capi.h only forward-declares Pix, and Swift needs the full struct.
#include <leptonica/allheaders.h>
// The headers of the Tesseract quire links: scripts/build-tesseract's 5.5 build when it is there
// (Package.swift then links its static library), Debian's 5.3 otherwise.
#if __has_include("/opt/quire-tesseract/include/tesseract/capi.h")
#include "/opt/quire-tesseract/include/tesseract/capi.h"
#else
#include <tesseract/capi.h>
#endif
