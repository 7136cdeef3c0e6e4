// XXH3-64 in its AVX2 form: every function of this file is compiled for AVX2 (the rest of the
// build stays at the baseline); called only after the processor was found to have it.
#include <stddef.h>
#include <stdint.h>
#if defined(__x86_64__) && defined(__clang__)
#include <immintrin.h>
#pragma clang attribute push(__attribute__((target("avx2"))), apply_to = function)
#define XXH_INLINE_ALL
#define XXH_NAMESPACE easel_avx2_
#define XXH_VECTOR 2 /* XXH_AVX2 */
#include <xxhash.h>
#pragma clang attribute pop

uint64_t easel_xxh3_64_avx2(const void *bytes, size_t length);

uint64_t easel_xxh3_64_avx2(const void *bytes, size_t length) { return XXH3_64bits(bytes, length); }
#endif
