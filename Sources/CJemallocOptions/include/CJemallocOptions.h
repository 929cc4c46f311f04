#ifndef QUIRE_CJEMALLOC_OPTIONS_H
#define QUIRE_CJEMALLOC_OPTIONS_H

/// jemalloc's options for every role of the `quire` binary, as its `malloc_conf` string: jemalloc
/// reads it once, as the process starts, before `MALLOC_CONF` from the environment (which may
/// override it). A process on another malloc ignores it.
extern const char *malloc_conf;

#endif
