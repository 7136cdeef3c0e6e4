#ifndef EASEL_AVIF_H
#define EASEL_AVIF_H

#include <stddef.h>
#include <stdint.h>

/* AVIF through libavif (dav1d to decode, aom to encode). Every function returns 1 on success
 * or 0 with a message; -1 (pixels) and -2 (frames) mean a limit refused the file before any
 * pixel memory was allocated (the header's width and height are then filled when known). */

#define EASEL_AVIF_MESSAGE_SIZE 200

typedef struct {
    int width;
    int height;
    int depth;        /* bits per sample: 8, 10 or 12 */
    int has_alpha;
    int frame_count;
    int rotation;     /* irot: counter-clockwise quarter turns 0-3 */
    int mirror;       /* imir: -1 none, 0 top and bottom exchanged, 1 left and right exchanged */
    int color_primaries;  /* nclx / CICP code points (ITU-T H.273): 1 BT.709, 9 BT.2020, 12 P3 (D65)… */
    int transfer;         /* 13 sRGB, 1/6/14/15 BT.709-like, 8 linear, 16 PQ, 18 HLG… */
} easel_avif_header;

/* Parses the container (no pixel decoding). *icc, when the file carries an ICC profile of at
 * most max_icc bytes, is a malloc'ed copy (free with easel_avif_free); a larger one sets
 * *icc_size with *icc NULL. */
int easel_avif_read_header(const uint8_t *data, size_t size, uint32_t max_pixels, uint32_t max_frames,
                           easel_avif_header *header, size_t max_icc, uint8_t **icc, size_t *icc_size, char *message);

/* Decodes the first frame to 8-bit RGBA (10/12-bit scaled), as stored (irot/imir not applied).
 * Refuses unless the image is exactly width x height. */
int easel_avif_decode(const uint8_t *data, size_t size, uint32_t max_pixels, uint32_t max_frames, int width, int height,
                      uint8_t *pixels, size_t row_bytes, char *message);

/* Encodes RGBA (alpha kept when has_alpha) as 8-bit 4:2:0 AVIF with aom: quality 1-100
 * (mapped to a quantizer as libheif does), speed 0-10 (10 fastest), threads >= 1. */
int easel_avif_encode(const uint8_t *pixels, int width, int height, size_t row_bytes, int has_alpha, int quality,
                      int speed, int threads, uint8_t **output, size_t *output_size, char *message);

void easel_avif_free(void *buffer);

#endif
