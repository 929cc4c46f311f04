// Leptonica, the image library under Tesseract: decoding, scaling, rotation, skew, binarisation.
#include <leptonica/allheaders.h>
