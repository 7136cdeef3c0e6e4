#ifndef EASEL_MALLOC_H
#define EASEL_MALLOC_H

/// Tunes glibc's allocator for a batch of decodes (`easel thumbnail`): buffers up to 32 MiB
/// (decoded images, libjpeg's coefficient arrays) come from the arenas and freed memory is
/// kept (trim threshold 512 MiB), so each image reuses the pages of the one before instead of
/// mapping, faulting in and unmapping fresh ones (a page-fault and TLB-shootdown storm across
/// threads). Peak memory stays that of the largest images in flight.
void easel_tune_malloc_for_batch(void);

/// Tunes glibc's allocator for a server (`easel serve`): buffers of 1 MiB or more (decoded
/// images, bands, encoded answers) are always mapped on their own and go back to the kernel
/// when freed. glibc's default raises that threshold as such buffers are freed (up to 32 MiB),
/// after which they come from per-thread arenas that keep the memory: under mixed load with
/// 49 MP sources, a quarter of the peak (`scripts/load.sh`, docs/benchmarks.md).
void easel_tune_malloc_for_server(void);

#endif
