// What a 100 KB disk-cache get pays per value besides SQLite: the copy and the checksum.
// XXH64 as EaselSupport.Checksum computes it (same rounds, in C), XXH3-64 from xxhash.h (inlined;
// SSE2, or AVX2 when built with -mavx2), and memcpy, each over the same buffer, best of 5; then
// memcpy of values scattered over 256 MB, as a get of a cache far larger than the processor's
// caches copies them from memory (best of 3 passes, each value once per pass).
#define XXH_INLINE_ALL
#include <xxhash.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
    size_t size = argc > 1 ? (size_t)atol(argv[1]) : 102400;
    int rounds = 20000;
    uint8_t *a = malloc(size), *b = malloc(size);
    for (size_t i = 0; i < size; i++) a[i] = (uint8_t)(i * 131 + 7);
    double best[3] = {1e9, 1e9, 1e9};
    uint64_t sink = 0;
    for (int pass = 0; pass < 5; pass++) {
        double t = now();
        for (int i = 0; i < rounds; i++) { sink += XXH64(a, size, 0); a[i % size]++; }
        double x64 = (now() - t) / rounds * 1e6;
        t = now();
        for (int i = 0; i < rounds; i++) { sink += XXH3_64bits(a, size); a[i % size]++; }
        double x3 = (now() - t) / rounds * 1e6;
        t = now();
        for (int i = 0; i < rounds; i++) { memcpy(b, a, size); a[i % size]++; sink += b[i % size]; }
        double copy = (now() - t) / rounds * 1e6;
        if (x64 < best[0]) best[0] = x64;
        if (x3 < best[1]) best[1] = x3;
        if (copy < best[2]) best[2] = copy;
    }
    size_t span = (size_t)256 << 20, count = span / size;
    // A prime step visits every value once per pass, each far from the last, unless it divides count.
    size_t step = count % 7919 ? 7919 : 7927;
    uint8_t *big = count >= 2 ? malloc(count * size) : NULL;
    if (!big) {
        fprintf(stderr, "need at least two values of %zu bytes in 256 MB, and the memory for them\n", size);
        return 1;
    }
    memset(big, 1, count * size);
    double cold = 1e9;
    for (int pass = 0; pass < 3; pass++) {
        double t = now();
        for (size_t i = 0; i < count; i++) { memcpy(b, big + (i * step % count) * size, size); sink += b[i % size]; }
        double each = (now() - t) / count * 1e6;
        if (each < cold) cold = each;
    }
    printf("%zu bytes: XXH64 %.2f us, XXH3-64 %.2f us, memcpy %.2f us, memcpy from memory %.2f us (%llu)\n", size,
           best[0], best[1], best[2], cold, (unsigned long long)(sink & 1));
    return 0;
}
