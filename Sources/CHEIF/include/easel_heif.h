#ifndef EASEL_HEIF_H
#define EASEL_HEIF_H

#include <stddef.h>
#include <stdint.h>

/* HEIC/HEIF through libheif (libde265 decodes HEVC). Sizes are as displayed: libheif applies
 * the container's irot/imir while decoding. Returns 1 on success or 0 with a message. */

#define EASEL_HEIF_MESSAGE_SIZE 200

typedef struct {
    int width;
    int height;
    int has_alpha;
    int depth;        /* luma bits per sample */
    int image_count;  /* top-level images */
    int color_primaries;  /* from an nclx colr box (H.273 code points), 2 (unspecified) without one */
    int transfer;
    int is_thumbnail;  /* these are the embedded thumbnail's facts (asked for, and there is one) */
} easel_heif_header;

/* The primary image's header, or its first embedded thumbnail's when use_thumbnail and it has
 * one; *icc as in easel_avif_read_header. */
int easel_heif_read_header(const uint8_t *data, size_t size, int use_thumbnail, easel_heif_header *header, size_t max_icc,
                           uint8_t **icc, size_t *icc_size, char *message);

/* Decodes the primary image (its first embedded thumbnail when use_thumbnail and it has one) to
 * 8-bit RGBA (straight alpha; HDR scaled to 8 bits), upright. Refuses unless it is exactly
 * width x height. */
int easel_heif_decode(const uint8_t *data, size_t size, int use_thumbnail, int width, int height, uint8_t *pixels,
                      size_t row_bytes, char *message);

/* Encodes RGBA pixels (straight alpha; alpha kept when has_alpha) as HEIC with libheif's HEVC
 * encoder (x265) at quality 1-100, into a buffer the caller frees with easel_heif_free. Returns
 * 1, or 0 with a message (no HEVC encoder in this libheif among them). */
int easel_heif_encode(const uint8_t *pixels, int width, int height, size_t row_bytes, int has_alpha, int quality,
                      uint8_t **output, size_t *output_size, char *message);

/* 1 when this libheif has an AV1 decoder (it then reads AVIF files' thumbnails too). */
int easel_heif_decodes_av1(void);

void easel_heif_free(void *buffer);

#endif
