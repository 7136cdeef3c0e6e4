// XXH3-64 in the form this build's target allows (SSE2 on x86-64), inlined from xxhash.h under a
// private namespace so that it cannot clash with a libxxhash linked by someone else.
#include <stddef.h>
#include <stdint.h>
#define XXH_INLINE_ALL
#define XXH_NAMESPACE easel_default_
#include <xxhash.h>

uint64_t easel_xxh3_64_default(const void *bytes, size_t length);

uint64_t easel_xxh3_64_default(const void *bytes, size_t length) { return XXH3_64bits(bytes, length); }
