#include "easel_malloc.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

void easel_tune_malloc_for_server(void) {
#if defined(__GLIBC__)
    mallopt(M_ARENA_MAX, 2);
    mallopt(M_MMAP_THRESHOLD, 256 * 1024);
#endif
}
