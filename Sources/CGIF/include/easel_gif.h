#ifndef EASEL_GIF_H
#define EASEL_GIF_H

#include <stddef.h>
#include <stdint.h>

#define EASEL_GIF_MESSAGE_SIZE 200

/* Logical screen size and frame count hint, from the header alone. */
int easel_gif_read_header(const uint8_t *data, size_t size, int *width, int *height, char *message);

/* Decodes the first frame, composed onto a transparent canvas of the logical screen size,
 * as RGBA (straight alpha) into `pixels` (height rows of row_bytes). A frame larger than
 * max_frame_pixels is refused (the canvas limit alone would not bound the work). */
int easel_gif_decode_first_frame(const uint8_t *data, size_t size, uint8_t *pixels, size_t row_bytes,
                                 int width, int height, long max_frame_pixels, char *message);

#endif
