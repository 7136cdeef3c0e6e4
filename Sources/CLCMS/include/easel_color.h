#ifndef EASEL_COLOR_H
#define EASEL_COLOR_H

#include <stddef.h>
#include <stdint.h>

/* Colour management through Little CMS 2: embedded ICC profiles to sRGB. Transforms are made
 * with cmsFLAGS_NOCACHE, so one transform may convert pixels on several threads at once. */

#define EASEL_COLOR_MESSAGE_SIZE 200

/* Pixel layouts a transform reads or writes (4 bytes per pixel except GRAY8). */
enum {
    EASEL_PIXELS_RGBA8 = 0,   /* R G B A; alpha untouched */
    EASEL_PIXELS_GRAY8 = 1,   /* one byte */
    EASEL_PIXELS_GRAYX8 = 2,  /* gray in the first of 4 bytes (a gray image decoded to RGBA) */
    EASEL_PIXELS_CMYK8 = 3,   /* C M Y K, 0 = no ink */
    EASEL_PIXELS_CMYK8_INVERTED = 4 /* Adobe's inverted CMYK, 255 = no ink */
};

/* Colour spaces of a profile's device side. */
enum {
    EASEL_ICC_OTHER = 0,
    EASEL_ICC_GRAY = 1,
    EASEL_ICC_RGB = 3,
    EASEL_ICC_CMYK = 4
};

typedef struct {
    int color_space;        /* EASEL_ICC_* */
    int is_srgb_like;       /* its description names sRGB (a conversion would change nothing) */
    unsigned version;       /* the header's version, e.g. 0x04300000 */
} easel_icc_info;

/* Parses a profile. Returns 1 and fills info and description (UTF-8 truncated to
 * description_size - 1 bytes, NUL-terminated) or 0 with a message when lcms refuses it. */
int easel_icc_read(const uint8_t *icc, size_t size, easel_icc_info *info, char *description,
                   size_t description_size, char *message);

/* A transform from `input` (NULL: sRGB) to `output` (NULL: sRGB) with the given pixel layouts,
 * relative colorimetric intent with black point compensation (RGB matrix/TRC profiles to sRGB
 * in RGBA take a table-driven fast path, see easel_color.c). NULL with a message when the
 * profiles do not fit the layouts or are damaged. Free with easel_color_transform_free. */
void *easel_color_transform_create(const uint8_t *input, size_t input_size, int input_layout,
                                   const uint8_t *output, size_t output_size, int output_layout, char *message);

/* Converts height rows of width pixels; rows start row_bytes apart. In place when source ==
 * target (the two layouts must then have the same bytes per pixel). With set_opaque, the 4th
 * byte of every target pixel is set to 255 (CMYK converted in place leaves K there).
 * Thread-safe. */
void easel_color_transform_apply(void *transform, const uint8_t *source, uint8_t *target, int width, int height,
                                 size_t source_row_bytes, size_t target_row_bytes, int set_opaque);

void easel_color_transform_free(void *transform);

/* easel_color_transform_create without the matrix/TRC fast path: always Little CMS's own
 * transform (tests compare the two). */
void *easel_color_transform_create_general(const uint8_t *input, size_t input_size, int input_layout,
                                           const uint8_t *output, size_t output_size, int output_layout, char *message);

/* An RGB profile (v4, D65 white) from chromaticities and the sRGB tone curve (or, with gamma
 * above 0, a pure power curve), e.g. Display P3.
 * *output is malloc'ed (free with easel_color_free). For tests and tools. */
int easel_icc_make_rgb(double white_x, double white_y, const double primaries[6], double gamma, const char *description,
                       uint8_t **output, size_t *output_size);

/* A CMYK input profile whose lookup table maps ink to colour by the naive formula
 * (R = (1 - C)(1 - K) ...) with every channel then raised to `gamma` (1: the naive formula).
 * For tests: a profile whose result differs measurably from the naive conversion. */
int easel_icc_make_test_cmyk(double gamma, int grid_points, uint8_t **output, size_t *output_size);

void easel_color_free(void *buffer);

#endif
