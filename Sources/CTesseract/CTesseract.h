// Leptonica first: capi.h only forward-declares Pix, and Swift needs the full struct.
#include <leptonica/allheaders.h>
#include <tesseract/capi.h>
