#ifndef EASEL_SHRINK_H
#define EASEL_SHRINK_H

#include <stddef.h>
#include <stdint.h>

/* Shrink-on-load's block means, for the decoders that shrink as they read (PNG, TIFF, GIF):
 * each output pixel is the mean of a `factor × factor` block of the source (the last ones in a
 * row or column partial), colour weighed by alpha, alpha rounded. A decoder adds each source
 * row's pixels into one row of sums (four per output pixel: premultiplied red, green and blue,
 * then alpha; at most 64 × 255 × 255 each, well inside 32 bits) and writes the output row when
 * its band of `factor` rows, or the image, ends. */

/* Adds a straight-alpha RGBA pixel to its block's sums. */
static inline void easel_shrink_add(uint32_t *sum, const uint8_t *p) {
    uint32_t alpha = p[3];
    sum[0] += p[0] * alpha;
    sum[1] += p[1] * alpha;
    sum[2] += p[2] * alpha;
    sum[3] += alpha;
}

/* Writes the output row (RGBA, straight alpha) of the blocks summed in `sums`, each block `rows`
 * source rows tall over a source `width` pixels wide, and clears the sums for the next band. */
static inline void easel_shrink_emit_row(uint32_t *sums, uint8_t *target, uint32_t width, uint32_t out_width, uint32_t factor,
                                         uint32_t rows) {
    for (uint32_t x = 0; x < out_width; x++) {
        uint32_t columns = (x + 1) * factor <= width ? factor : width - x * factor;
        uint32_t count = columns * rows, *sum = sums + 4 * (size_t)x;
        uint8_t *p = target + 4 * (size_t)x;
        uint32_t alpha = sum[3];
        for (int c = 0; c < 3; c++) p[c] = alpha ? (uint8_t)((sum[c] + alpha / 2) / alpha) : 0;
        p[3] = (uint8_t)((alpha + count / 2) / count);
        sum[0] = sum[1] = sum[2] = sum[3] = 0;
    }
}

/* As easel_shrink_emit_row for an opaque image, whose sums are three per output pixel, of the
 * samples themselves (red, green, blue): the same rounding as the weighed means, whose weights
 * are then all 255 (for `rows × columns` = n samples summing to S, (255 S + 255 n / 2) / 255 n
 * and (S + n / 2) / n round alike, n odd or even). */
static inline void easel_shrink_emit_opaque_row(uint32_t *sums, uint8_t *target, uint32_t width, uint32_t out_width,
                                                uint32_t factor, uint32_t rows) {
    for (uint32_t x = 0; x < out_width; x++) {
        uint32_t columns = (x + 1) * factor <= width ? factor : width - x * factor;
        uint32_t count = columns * rows, *sum = sums + 3 * (size_t)x;
        uint8_t *p = target + 4 * (size_t)x;
        for (int c = 0; c < 3; c++) p[c] = (uint8_t)((sum[c] + count / 2) / count);
        p[3] = 255;
        sum[0] = sum[1] = sum[2] = 0;
    }
}

#endif
