#ifndef EASEL_XXHASH_H
#define EASEL_XXHASH_H

#include <stddef.h>
#include <stdint.h>

/// XXH3-64 (seed 0) of `length` bytes, from xxHash's own header (Debian libxxhash-dev): its AVX2
/// form where the processor has AVX2 (as the compiler's runtime found at start-up), else its SSE2 form (the
/// x86-64 baseline) or, elsewhere, its scalar form. Every form gives the same value.
uint64_t easel_xxh3_64(const void *bytes, size_t length);

/// One form, for tests that compare them: 0 the default form of this build, 1 AVX2 (falls back to
/// the default where the processor lacks it).
uint64_t easel_xxh3_64_variant(const void *bytes, size_t length, int variant);

/// Whether the AVX2 form is the one `easel_xxh3_64` uses.
int easel_xxh3_uses_avx2(void);

#endif
