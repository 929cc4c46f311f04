#include "CJemallocOptions.h"

// lg_extent_max_active_fit: jemalloc carves a request out of a free extent of dirty pages at most
// 2^this times its size (6 by default: 64 times), so that short-lived small requests do not split
// large extents. An OCR worker keeps its dirty pages while busy (ProcessMemory's
// keepFreedPagesWhileBusy): the images it frees side by side coalesce into extents of 30-100 MB,
// and with the default every smaller request mapped new pages beside them, the worker's RSS
// climbing 15-40 MB a minute under a mixed soak (docs/benchmarks.md). 16 lifts the limit in
// practice (an 8 KiB request may take an extent of 512 MiB), as jemalloc has none for the extents
// it has already purged.
const char *malloc_conf = "lg_extent_max_active_fit:16";
