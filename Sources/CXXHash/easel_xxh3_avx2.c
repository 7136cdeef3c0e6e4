// XXH3-64 in its AVX2 form: every function xxhash.h defines here is compiled for AVX2 (the rest
// of the build stays at the baseline); called only after the processor was found to have it.
// With XXH_INLINE_ALL those functions are static to this file.
#include <stddef.h>
#include <stdint.h>
#if defined(__x86_64__) && defined(__clang__)
// What xxhash.h includes, first and outside the AVX2 region.
#include <assert.h>
#include <immintrin.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#pragma clang attribute push(__attribute__((target("avx2"))), apply_to = function)
#define XXH_INLINE_ALL
#define XXH_VECTOR 2 /* XXH_AVX2 */
#include <xxhash.h>
#pragma clang attribute pop

#if XXH_VERSION_NUMBER < 800
#error "xxHash 0.8.0 or later is needed (Debian: libxxhash-dev)"
#endif

uint64_t easel_xxh3_64_avx2(const void *bytes, size_t length);

uint64_t easel_xxh3_64_avx2(const void *bytes, size_t length) { return XXH3_64bits(bytes, length); }
#endif
