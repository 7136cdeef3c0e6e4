#ifndef EASEL_MALLOC_H
#define EASEL_MALLOC_H

/// Tunes glibc's allocator for a batch of decodes (`easel thumbnail`): buffers up to 32 MiB
/// (decoded images, libjpeg's coefficient arrays) come from the arenas and freed memory is
/// kept (trim threshold 512 MiB), so each image reuses the pages of the one before instead of
/// mapping, faulting in and unmapping fresh ones (a page-fault and TLB-shootdown storm across
/// threads). Peak memory stays that of the largest images in flight.
void easel_tune_malloc_for_batch(void);

#endif
