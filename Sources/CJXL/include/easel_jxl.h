#ifndef EASEL_JXL_H
#define EASEL_JXL_H

#include <stddef.h>
#include <stdint.h>

#define EASEL_JXL_MESSAGE_SIZE 200

typedef struct {
    uint32_t width, height;
    int has_alpha, is_gray, is_animated, bits_per_sample, orientation;
    /* The ICC profile of the decoded pixels' colour space (its size; 0: none). */
    size_t icc_size;
} easel_jxl_info;

/* The header (basic info and colour encoding) of a JPEG XL codestream or container. The
 * profile is copied when icc_capacity holds it. Returns 1, or 0 with a message. */
int easel_jxl_read_info(const uint8_t *data, size_t size, easel_jxl_info *info, uint8_t *icc, size_t icc_capacity, char *message);

/* Decodes the first frame as 8-bit RGBA in its stored orientation (the caller applies it)
 * into `pixels` (height rows of row_bytes, a multiple of 64); width and height must be the
 * header's. Returns 1, or 0 with a message. */
int easel_jxl_decode(const uint8_t *data, size_t size, uint8_t *pixels, size_t row_bytes, int width, int height, char *message);

/* Encodes RGBA rows (alpha kept when has_alpha) as a JPEG XL codestream at a quality on
 * cjxl's scale (100: lossless) and an effort (1-9). *output is malloc'd (free() it). */
int easel_jxl_encode(const uint8_t *pixels, size_t row_bytes, int width, int height, int has_alpha, int quality, int effort,
                     uint8_t **output, size_t *output_size, char *message);

#endif
