#ifndef EASEL_RESAMPLE_H
#define EASEL_RESAMPLE_H

#include <stddef.h>
#include <stdint.h>

/*
 * Separable resampling of 8-bit pixels in 16-bit fixed point (SSE2 on x86-64, plain C
 * elsewhere). A kernel is, for each output coordinate, a first input index `starts[i]` and
 * `taps` signed weights scaled by 2^precision (weights[i * taps + k]); `starts[i] + taps`
 * never passes the input's size, and each output's weights sum to exactly 2^precision
 * (7 <= precision <= 14, and the sum of a row's absolute weights times 2^precision below
 * 65536, so no 32-bit sum can overflow).
 *
 * Between the passes samples are 16-bit with EASEL_RESAMPLE_FRACTION_BITS fractional bits
 * (-512 ..< 512 in steps of 1/64): the overshoot of Lanczos' negative lobes is kept, not
 * clamped, and nothing is rounded to a whole level before the second pass.
 */
#define EASEL_RESAMPLE_FRACTION_BITS 6

/* Horizontal pass over `rows` rows of 4-byte pixels (RGBA or RGBX): dst row y (16-bit
 * samples, `dst_stride` in samples), pixel x from src row y, pixels starts[x] ..< starts[x] +
 * taps. */
void easel_resample_rows4(const uint8_t *src, size_t src_stride, int16_t *dst, size_t dst_stride,
                          int rows, int dst_width, const int32_t *starts, const int16_t *weights,
                          int taps, int precision);

/* Horizontal pass over `rows` rows of 1-byte pixels (gray). */
void easel_resample_rows1(const uint8_t *src, size_t src_stride, int16_t *dst, size_t dst_stride,
                          int rows, int dst_width, const int32_t *starts, const int16_t *weights,
                          int taps, int precision);

/* Vertical pass: dst row y, byte b (rounded, saturated to 0...255) from the 16-bit samples
 * of src rows starts[y] ..< starts[y] + taps, sample b; `row_samples` per row, any pixel
 * layout; `src_stride` in samples. */
void easel_resample_columns(const int16_t *src, size_t src_stride, uint8_t *dst, size_t dst_stride,
                            int row_samples, int dst_height, const int32_t *starts,
                            const int16_t *weights, int taps, int precision);

#endif
