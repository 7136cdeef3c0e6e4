/*
 * 16-bit fixed-point resampling passes (see easel_resample.h). The SSE2 forms multiply pairs
 * of 16-bit samples by pairs of 16-bit weights with one `pmaddwd` (two products summed into
 * a 32-bit lane), which is why weights are 16-bit and samples are arranged in pairs:
 *   rows:     two neighbouring pixels' channels interleaved, [r0 r1 g0 g1 b0 b1 a0 a1], times
 *             [w0 w1] repeated: one pmaddwd gives two taps of all four channels;
 *   columns:  the same sample of two neighbouring rows interleaved, times [wa wb] repeated:
 *             8 samples of two rows per two pmaddwd.
 * SSE2 is part of x86-64 itself, so no runtime dispatch is needed. The plain C forms are the
 * same arithmetic (used on other architectures, and for the tails).
 */
#include "easel_resample.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#define FRACTION EASEL_RESAMPLE_FRACTION_BITS

/* A row sum (weights scaled by 2^precision) as a 16-bit sample with FRACTION fractional bits. */
static inline int16_t to_middle(int32_t sum, int precision) {
    int shift = precision - FRACTION;
    int32_t value = (sum + (1 << (shift - 1))) >> shift;
    return (int16_t)(value < -32768 ? -32768 : (value > 32767 ? 32767 : value));
}

/* A column sum (16-bit samples times weights) as a byte. */
static inline uint8_t to_byte(int32_t sum, int precision) {
    int shift = precision + FRACTION;
    int32_t value = (sum + (1 << (shift - 1))) >> shift;
    return (uint8_t)(value < 0 ? 0 : (value > 255 ? 255 : value));
}

static inline int32_t weight_pair(int16_t first, int16_t second) {
    return (int32_t)((uint32_t)(uint16_t)first | ((uint32_t)(uint16_t)second << 16));
}

/* w[0] and w[1] as one pmaddwd operand lane: a single 32-bit load on little-endian x86. */
static inline int32_t load_pair(const int16_t *w) {
    int32_t pair;
    __builtin_memcpy(&pair, w, 4);
    return pair;
}

void easel_resample_rows4(const uint8_t *src, size_t src_stride, int16_t *dst, size_t dst_stride,
                          int rows, int dst_width, const int32_t *starts, const int16_t *weights,
                          int taps, int precision) {
#if defined(__SSE2__)
    const __m128i zero = _mm_setzero_si128();
    const int shift = precision - FRACTION;
    const __m128i round = _mm_set1_epi32(1 << (shift - 1));
#endif
    for (int y = 0; y < rows; y++) {
        const uint8_t *row = src + (size_t)y * src_stride;
        int16_t *out = dst + (size_t)y * dst_stride;
        for (int x = 0; x < dst_width; x++) {
            const uint8_t *p = row + (size_t)starts[x] * 4;
            const int16_t *w = weights + (size_t)x * taps;
#if defined(__SSE2__)
            __m128i sum0 = round, sum1 = zero;
            int k = 0;
            for (; k + 4 <= taps; k += 4) {
                __m128i pixels = _mm_loadu_si128((const __m128i *)(p + k * 4)); /* four pixels */
                __m128i lo = _mm_unpacklo_epi8(pixels, zero);                    /* p0 p1, 16-bit */
                __m128i hi = _mm_unpackhi_epi8(pixels, zero);                    /* p2 p3 */
                lo = _mm_unpacklo_epi16(lo, _mm_srli_si128(lo, 8));              /* r0 r1 g0 g1 b0 b1 a0 a1 */
                hi = _mm_unpacklo_epi16(hi, _mm_srli_si128(hi, 8));
                sum0 = _mm_add_epi32(sum0, _mm_madd_epi16(lo, _mm_set1_epi32(load_pair(w + k))));
                sum1 = _mm_add_epi32(sum1, _mm_madd_epi16(hi, _mm_set1_epi32(load_pair(w + k + 2))));
            }
            for (; k < taps; k++) {
                int32_t pixel;
                __builtin_memcpy(&pixel, p + k * 4, 4);
                __m128i one = _mm_unpacklo_epi16(_mm_unpacklo_epi8(_mm_cvtsi32_si128(pixel), zero), zero);
                sum0 = _mm_add_epi32(sum0, _mm_madd_epi16(one, _mm_set1_epi32(weight_pair(w[k], 0))));
            }
            __m128i sum = _mm_srai_epi32(_mm_add_epi32(sum0, sum1), shift);
            _mm_storel_epi64((__m128i *)(out + (size_t)x * 4), _mm_packs_epi32(sum, sum));
#else
            int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
            for (int k = 0; k < taps; k++) {
                s0 += p[k * 4] * w[k];
                s1 += p[k * 4 + 1] * w[k];
                s2 += p[k * 4 + 2] * w[k];
                s3 += p[k * 4 + 3] * w[k];
            }
            out[(size_t)x * 4] = to_middle(s0, precision);
            out[(size_t)x * 4 + 1] = to_middle(s1, precision);
            out[(size_t)x * 4 + 2] = to_middle(s2, precision);
            out[(size_t)x * 4 + 3] = to_middle(s3, precision);
#endif
        }
    }
}

void easel_resample_rows1(const uint8_t *src, size_t src_stride, int16_t *dst, size_t dst_stride,
                          int rows, int dst_width, const int32_t *starts, const int16_t *weights,
                          int taps, int precision) {
    for (int y = 0; y < rows; y++) {
        const uint8_t *row = src + (size_t)y * src_stride;
        int16_t *out = dst + (size_t)y * dst_stride;
        for (int x = 0; x < dst_width; x++) {
            const uint8_t *p = row + starts[x];
            const int16_t *w = weights + (size_t)x * taps;
            int32_t s0 = 0, s1 = 0;
            int k = 0;
            for (; k + 2 <= taps; k += 2) {
                s0 += p[k] * w[k];
                s1 += p[k + 1] * w[k + 1];
            }
            if (k < taps) s0 += p[k] * w[k];
            out[x] = to_middle(s0 + s1, precision);
        }
    }
}

void easel_resample_columns(const int16_t *src, size_t src_stride, uint8_t *dst, size_t dst_stride,
                            int row_samples, int dst_height, const int32_t *starts,
                            const int16_t *weights, int taps, int precision) {
    for (int y = 0; y < dst_height; y++) {
        const int16_t *first = src + (size_t)starts[y] * src_stride;
        const int16_t *w = weights + (size_t)y * taps;
        uint8_t *out = dst + (size_t)y * dst_stride;
        int b = 0;
#if defined(__SSE2__)
        const int shift = precision + FRACTION;
        const __m128i round = _mm_set1_epi32(1 << (shift - 1));
        for (; b + 16 <= row_samples; b += 16) {
            __m128i s0 = round, s1 = round, s2 = round, s3 = round;
            int k = 0;
            for (; k + 2 <= taps; k += 2) {
                const int16_t *ra = first + (size_t)k * src_stride + b, *rc = ra + src_stride;
                __m128i pair = _mm_set1_epi32(load_pair(w + k));
                __m128i a0 = _mm_loadu_si128((const __m128i *)ra), a1 = _mm_loadu_si128((const __m128i *)(ra + 8));
                __m128i c0 = _mm_loadu_si128((const __m128i *)rc), c1 = _mm_loadu_si128((const __m128i *)(rc + 8));
                s0 = _mm_add_epi32(s0, _mm_madd_epi16(_mm_unpacklo_epi16(a0, c0), pair)); /* a0 c0 a1 c1 ... */
                s1 = _mm_add_epi32(s1, _mm_madd_epi16(_mm_unpackhi_epi16(a0, c0), pair));
                s2 = _mm_add_epi32(s2, _mm_madd_epi16(_mm_unpacklo_epi16(a1, c1), pair));
                s3 = _mm_add_epi32(s3, _mm_madd_epi16(_mm_unpackhi_epi16(a1, c1), pair));
            }
            if (k < taps) {
                const int16_t *ra = first + (size_t)k * src_stride + b;
                __m128i single = _mm_set1_epi32(weight_pair(w[k], 0));
                __m128i zero = _mm_setzero_si128();
                __m128i a0 = _mm_loadu_si128((const __m128i *)ra), a1 = _mm_loadu_si128((const __m128i *)(ra + 8));
                s0 = _mm_add_epi32(s0, _mm_madd_epi16(_mm_unpacklo_epi16(a0, zero), single));
                s1 = _mm_add_epi32(s1, _mm_madd_epi16(_mm_unpackhi_epi16(a0, zero), single));
                s2 = _mm_add_epi32(s2, _mm_madd_epi16(_mm_unpacklo_epi16(a1, zero), single));
                s3 = _mm_add_epi32(s3, _mm_madd_epi16(_mm_unpackhi_epi16(a1, zero), single));
            }
            s0 = _mm_srai_epi32(s0, shift);
            s1 = _mm_srai_epi32(s1, shift);
            s2 = _mm_srai_epi32(s2, shift);
            s3 = _mm_srai_epi32(s3, shift);
            _mm_storeu_si128((__m128i *)(out + b),
                             _mm_packus_epi16(_mm_packs_epi32(s0, s1), _mm_packs_epi32(s2, s3)));
        }
#endif
        for (; b < row_samples; b++) {
            int32_t sum = 0;
            for (int k = 0; k < taps; k++) sum += first[(size_t)k * src_stride + b] * w[k];
            out[b] = to_byte(sum, precision);
        }
    }
}
