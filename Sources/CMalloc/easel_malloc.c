#include "easel_malloc.h"

/* Any C library header defines __GLIBC__ on glibc (through features.h); without one the checks
 * below were always false and the tuning never ran. */
#include <stdlib.h>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

void easel_tune_malloc_for_batch(void) {
#if defined(__GLIBC__)
    mallopt(M_MMAP_THRESHOLD, 32 * 1024 * 1024);
    mallopt(M_TRIM_THRESHOLD, 512 * 1024 * 1024);
#endif
}

void easel_tune_malloc_for_server(void) {
#if defined(__GLIBC__)
    mallopt(M_MMAP_THRESHOLD, 1024 * 1024);
#endif
}
