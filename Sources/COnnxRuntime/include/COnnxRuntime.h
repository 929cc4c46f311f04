// ONNX Runtime's C API, loaded at run time: the few calls the scene engine makes (open a model, run it
// on one float tensor, read the model's metadata), wrapped here so that Swift sees plain C functions
// rather than the API's table of function pointers.
//
// The library is opened with dlopen once per process (QUIRE_ONNXRUNTIME, else
// /opt/quire-onnxruntime/lib/libonnxruntime.so, which scripts/install-onnxruntime installs); its
// header comes from ONNX Runtime's own source at build time (the same script). Built without the
// header, or run without the library, every call here fails with the reason in
// `quire_ort_error()`, and quire reads with Tesseract alone.
#ifndef QUIRE_CONNXRUNTIME_H
#define QUIRE_CONNXRUNTIME_H

#include <stddef.h>
#include <stdint.h>

typedef struct quire_ort_session quire_ort_session;

/// 1 when ONNX Runtime is loaded (the first call loads it), 0 with the reason in `quire_ort_error()`.
int quire_ort_available(void);
/// Why ONNX Runtime is not available, or NULL when it is.
const char *quire_ort_error(void);
/// The loaded library's version ("1.32.0"), or NULL.
const char *quire_ort_version(void);

/// Opens the model at `path` for one thread's use. Its operators run on the process's one pool of
/// operator threads, which every session shares and the first open sizes to `threads` (later opens'
/// `threads` are ignored). NULL on failure, with ONNX Runtime's message in `error`.
quire_ort_session *quire_ort_open(const char *path, int threads, char *error, size_t error_size);
void quire_ort_close(quire_ort_session *session);

/// Runs the model's first input on a float tensor of `rank` dimensions `shape`. Its first output, a
/// float tensor, is read where ONNX Runtime wrote it: `*output` holds it until `quire_ort_release(*value)`
/// (no copy: a batch of recognised lines is tens of megabytes of scores), its dimensions are in
/// `output_shape` (room for `*output_rank` of them on entry, their number on return). 0 on success;
/// -1 with the message in `error` (and nothing to release).
int quire_ort_run(quire_ort_session *session, const float *input, const int64_t *shape, size_t rank,
                  void **value, const float **output, int64_t *output_shape, size_t *output_rank,
                  char *error, size_t error_size);
/// Releases an output of `quire_ort_run`; NULL does nothing.
void quire_ort_release(void *value);

/// The value the model's metadata holds under `key` (malloc'd: free with `quire_ort_free`), or NULL.
char *quire_ort_metadata(quire_ort_session *session, const char *key);

void quire_ort_free(void *pointer);

#endif
