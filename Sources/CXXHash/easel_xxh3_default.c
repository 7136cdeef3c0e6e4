// XXH3-64 in the form this build's target allows (SSE2 on x86-64), inlined from xxhash.h: with
// XXH_INLINE_ALL every function is static to this file, so nothing clashes with the AVX2 file or
// with a libxxhash linked by someone else.
#include <stddef.h>
#include <stdint.h>
#define XXH_INLINE_ALL
#include <xxhash.h>

// XXH3's output is stable (what the disk cache stores) from xxHash 0.8.0 on.
#if XXH_VERSION_NUMBER < 800
#error "xxHash 0.8.0 or later is needed (Debian: libxxhash-dev)"
#endif

uint64_t easel_xxh3_64_default(const void *bytes, size_t length);

uint64_t easel_xxh3_64_default(const void *bytes, size_t length) { return XXH3_64bits(bytes, length); }
