#ifndef EASEL_MALLOC_H
#define EASEL_MALLOC_H

/// Tunes glibc's allocator for a long-running image server: at most two arenas, and a fixed
/// mmap threshold of 256 KiB so that large buffers (encoded images, originals) are mapped and
/// given back to the system when freed, instead of being kept in arenas once glibc's adaptive
/// threshold has risen. Does nothing on other C libraries.
void easel_tune_malloc_for_server(void);

#endif
