// See include/COnnxRuntime.h: ONNX Runtime opened with dlopen once, its C API table taken from
// OrtGetApiBase, the one symbol the library exports for it.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "COnnxRuntime.h"
#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

static char error_text[512];
static pthread_once_t once = PTHREAD_ONCE_INIT;

#if __has_include(<onnxruntime_c_api.h>)
#include <onnxruntime_c_api.h>

static const OrtApi *api;
static OrtEnv *env;
static OrtMemoryInfo *cpu;
static const char *version;

struct quire_ort_session {
    OrtSession *session;
    char *input;
    char *output;
};

static void load(void) {
    const char *candidates[3] = {getenv("QUIRE_ONNXRUNTIME"), "/opt/quire-onnxruntime/lib/libonnxruntime.so", "libonnxruntime.so"};
    void *handle = NULL;
    const char *path = NULL;
    for (int i = 0; i < 3 && !handle; i++) {
        if (!candidates[i] || !candidates[i][0]) continue;
        handle = dlopen(candidates[i], RTLD_NOW | RTLD_LOCAL);
        path = candidates[i];
        if (i == 0 && !handle) {  // a named file that does not load is an error, not a reason to look elsewhere
            snprintf(error_text, sizeof error_text, "QUIRE_ONNXRUNTIME=%s: %s", candidates[0], dlerror());
            return;
        }
    }
    if (!handle) {
        snprintf(error_text, sizeof error_text, "no libonnxruntime.so (scripts/install-onnxruntime installs it in /opt/quire-onnxruntime)");
        return;
    }
    const OrtApiBase *(*get_base)(void) = (const OrtApiBase *(*)(void))dlsym(handle, "OrtGetApiBase");
    const OrtApiBase *base = get_base ? get_base() : NULL;
    const OrtApi *table = base ? base->GetApi(ORT_API_VERSION) : NULL;
    if (!table) {
        snprintf(error_text, sizeof error_text, "%s does not offer ONNX Runtime's C API version %d (older than the header?)", path, ORT_API_VERSION);
        dlclose(handle);
        return;
    }
    OrtStatus *status = table->CreateCpuMemoryInfo(OrtArenaAllocator, OrtMemTypeDefault, &cpu);
    if (status) {
        snprintf(error_text, sizeof error_text, "%s: %s", path, table->GetErrorMessage(status));
        table->ReleaseStatus(status);
        return;
    }
    version = base->GetVersionString();
    api = table;
}

int quire_ort_available(void) {
    pthread_once(&once, load);
    return api != NULL;
}

const char *quire_ort_error(void) {
    pthread_once(&once, load);
    return api ? NULL : error_text;
}

const char *quire_ort_version(void) {
    pthread_once(&once, load);
    return version;
}

// Copies the status's message into `error` and releases it; returns -1.
static int fail(OrtStatus *status, char *error, size_t error_size) {
    snprintf(error, error_size, "%s", api->GetErrorMessage(status));
    api->ReleaseStatus(status);
    return -1;
}

static char *copy_name(OrtAllocator *allocator, char *name) {
    char *copy = strdup(name);
    allocator->Free(allocator, name);
    return copy;
}

static pthread_mutex_t env_lock = PTHREAD_MUTEX_INITIALIZER;

// The process's environment, made by the first open, with one pool of `threads` operator threads (the
// calling thread is one of them) that every session shares: a picture read while the other worker
// threads wait uses every core, and pictures read at once share the cores instead of each session
// bringing threads of its own (two engine threads with two operator threads each on 2 cores read
// photos-dev 7-22% slower than with one each). The pool does not spin waiting for work between runs:
// the worker threads are the service's own. Its threads flush denormal floats to zero, as the
// calling thread does during a run (`quire_ort_run`).
static OrtStatus *shared_env(int threads) {
    pthread_mutex_lock(&env_lock);
    OrtStatus *status = NULL;
    if (!env) {
        OrtThreadingOptions *pools = NULL;
        status = api->CreateThreadingOptions(&pools);
        if (!status) status = api->SetGlobalIntraOpNumThreads(pools, threads);
        if (!status) status = api->SetGlobalInterOpNumThreads(pools, 1);
        if (!status) status = api->SetGlobalSpinControl(pools, 0);
        if (!status) status = api->SetGlobalDenormalAsZero(pools);
        if (!status) status = api->CreateEnvWithGlobalThreadPools(ORT_LOGGING_LEVEL_ERROR, "quire", pools, &env);
        if (pools) api->ReleaseThreadingOptions(pools);
    }
    pthread_mutex_unlock(&env_lock);
    return status;
}

quire_ort_session *quire_ort_open(const char *path, int threads, char *error, size_t error_size) {
    if (!quire_ort_available()) {
        snprintf(error, error_size, "%s", error_text);
        return NULL;
    }
    OrtSessionOptions *options = NULL;
    OrtStatus *status = shared_env(threads);
    if (!status) status = api->CreateSessionOptions(&options);
    if (!status) status = api->DisablePerSessionThreads(options);
    if (!status) status = api->SetSessionGraphOptimizationLevel(options, ORT_ENABLE_ALL);
    // The inputs change size with every picture: an arena would keep the largest one's memory (it
    // saved a tenth of a scene reading's CPU, the kernel's page faults, for 400-500 MB kept by each
    // worker; so did a cache of freed blocks of the shim's own, docs/benchmarks.md).
    if (!status) status = api->DisableCpuMemArena(options);
    OrtSession *session = NULL;
    if (!status) status = api->CreateSession(env, path, options, &session);
    if (options) api->ReleaseSessionOptions(options);
    if (status) {
        fail(status, error, error_size);
        return NULL;
    }
    OrtAllocator *allocator = NULL;
    char *input = NULL, *output = NULL;
    status = api->GetAllocatorWithDefaultOptions(&allocator);
    if (!status) status = api->SessionGetInputName(session, 0, allocator, &input);
    if (!status) input = copy_name(allocator, input);
    if (!status) status = api->SessionGetOutputName(session, 0, allocator, &output);
    if (!status) output = copy_name(allocator, output);
    quire_ort_session *result = status ? NULL : calloc(1, sizeof *result);
    if (!result) {
        if (status) fail(status, error, error_size);
        else snprintf(error, error_size, "out of memory");
        free(input);
        free(output);
        api->ReleaseSession(session);
        return NULL;
    }
    result->session = session;
    result->input = input;
    result->output = output;
    return result;
}

void quire_ort_close(quire_ort_session *session) {
    if (!session) return;
    api->ReleaseSession(session->session);
    free(session->input);
    free(session->output);
    free(session);
}

int quire_ort_run(quire_ort_session *session, const float *input, const int64_t *shape, size_t rank,
                  void **value, const float **output, int64_t *output_shape, size_t *output_rank,
                  char *error, size_t error_size) {
    size_t count = 1;
    for (size_t i = 0; i < rank; i++) count *= (size_t)shape[i];
    OrtValue *in = NULL, *out = NULL;
    OrtStatus *status = api->CreateTensorWithDataAsOrtValue(cpu, (void *)input, count * sizeof(float), shape, rank,
                                                            ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, &in);
    if (status) return fail(status, error, error_size);
    const char *input_names[1] = {session->input};
    const char *output_names[1] = {session->output};
#if defined(__x86_64__) || defined(__i386__)
    // The calling thread does its share of the operators. With denormal floats (below 1.2e-38, which
    // the detector's layers reach) flushed to zero, and read as zero, a run takes a third to a half
    // less time on x86 (photos-dev reads the same; docs/benchmarks.md). Only for the run: Tesseract,
    // on the same thread, keeps IEEE arithmetic.
    unsigned int csr = _mm_getcsr();
    _mm_setcsr(csr | 0x8040);  // FTZ (bit 15) and DAZ (bit 6)
#endif
    status = api->Run(session->session, NULL, input_names, (const OrtValue *const *)&in, 1, output_names, 1, &out);
#if defined(__x86_64__) || defined(__i386__)
    _mm_setcsr(csr);
#endif
    api->ReleaseValue(in);
    if (status) return fail(status, error, error_size);
    OrtTensorTypeAndShapeInfo *info = NULL;
    size_t dimensions = 0;
    ONNXTensorElementDataType type = ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
    float *data = NULL;
    status = api->GetTensorTypeAndShape(out, &info);
    if (!status) status = api->GetTensorElementType(info, &type);
    if (!status) status = api->GetDimensionsCount(info, &dimensions);
    if (!status && dimensions <= *output_rank) status = api->GetDimensions(info, output_shape, dimensions);
    if (!status) status = api->GetTensorMutableData(out, (void **)&data);
    if (info) api->ReleaseTensorTypeAndShapeInfo(info);
    if (status) {
        api->ReleaseValue(out);
        return fail(status, error, error_size);
    }
    if (type != ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT || dimensions > *output_rank) {
        snprintf(error, error_size, "the model's output is not a float tensor of at most %zu dimensions", *output_rank);
        api->ReleaseValue(out);
        return -1;
    }
    *value = out;
    *output = data;
    *output_rank = dimensions;
    return 0;
}

void quire_ort_release(void *value) {
    if (value) api->ReleaseValue((OrtValue *)value);
}

char *quire_ort_metadata(quire_ort_session *session, const char *key) {
    OrtModelMetadata *metadata = NULL;
    OrtAllocator *allocator = NULL;
    char *value = NULL;
    OrtStatus *status = api->GetAllocatorWithDefaultOptions(&allocator);
    if (!status) status = api->SessionGetModelMetadata(session->session, &metadata);
    if (!status) status = api->ModelMetadataLookupCustomMetadataMap(metadata, allocator, key, &value);
    if (metadata) api->ReleaseModelMetadata(metadata);
    if (status) {
        api->ReleaseStatus(status);
        return NULL;
    }
    return value ? copy_name(allocator, value) : NULL;
}

#else

static void load(void) {
    snprintf(error_text, sizeof error_text,
             "quire was built without ONNX Runtime's header (scripts/install-onnxruntime installs it; then build again)");
}

int quire_ort_available(void) { return 0; }

const char *quire_ort_error(void) {
    pthread_once(&once, load);
    return error_text;
}

const char *quire_ort_version(void) { return NULL; }

quire_ort_session *quire_ort_open(const char *path, int threads, char *error, size_t error_size) {
    (void)path;
    (void)threads;
    snprintf(error, error_size, "%s", quire_ort_error());
    return NULL;
}

void quire_ort_close(quire_ort_session *session) { (void)session; }

int quire_ort_run(quire_ort_session *session, const float *input, const int64_t *shape, size_t rank,
                  void **value, const float **output, int64_t *output_shape, size_t *output_rank,
                  char *error, size_t error_size) {
    (void)session; (void)input; (void)shape; (void)rank; (void)value; (void)output; (void)output_shape; (void)output_rank;
    snprintf(error, error_size, "%s", quire_ort_error());
    return -1;
}

void quire_ort_release(void *value) { (void)value; }

char *quire_ort_metadata(quire_ort_session *session, const char *key) {
    (void)session;
    (void)key;
    return NULL;
}

#endif

void quire_ort_free(void *pointer) { free(pointer); }
