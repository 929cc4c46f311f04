#include <zmq.h>
// eventfd wakes a zmq_poll from another thread (the wrapper's Wakeup); Glibc's module lacks it.
#include <sys/eventfd.h>
