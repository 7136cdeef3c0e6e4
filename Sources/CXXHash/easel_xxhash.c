#include "easel_xxhash.h"

uint64_t easel_xxh3_64_default(const void *bytes, size_t length);

#if defined(__x86_64__) && defined(__clang__)
uint64_t easel_xxh3_64_avx2(const void *bytes, size_t length);

// The processor's features are read once, before main, by the compiler's runtime: this is a load
// and a test of what it found.
int easel_xxh3_uses_avx2(void) { return __builtin_cpu_supports("avx2") ? 1 : 0; }

uint64_t easel_xxh3_64(const void *bytes, size_t length) {
    return easel_xxh3_uses_avx2() ? easel_xxh3_64_avx2(bytes, length) : easel_xxh3_64_default(bytes, length);
}

uint64_t easel_xxh3_64_variant(const void *bytes, size_t length, int variant) {
    return variant == 1 && easel_xxh3_uses_avx2() ? easel_xxh3_64_avx2(bytes, length) : easel_xxh3_64_default(bytes, length);
}
#else
int easel_xxh3_uses_avx2(void) { return 0; }
uint64_t easel_xxh3_64(const void *bytes, size_t length) { return easel_xxh3_64_default(bytes, length); }
uint64_t easel_xxh3_64_variant(const void *bytes, size_t length, int variant) {
    (void)variant;
    return easel_xxh3_64_default(bytes, length);
}
#endif
