#ifndef EASEL_WEBP_H
#define EASEL_WEBP_H
/* libwebp reports errors as return values, so Swift calls its still-image API directly; this
 * target exposes its headers, links it, and wraps the animation API (libwebpdemux's
 * WebPAnimDecoder, libwebpmux's WebPAnimEncoder) in a few calls. */
#include <stddef.h>
#include <stdint.h>
#include <webp/decode.h>
#include <webp/demux.h>
#include <webp/encode.h>

#define EASEL_WEBP_MESSAGE_SIZE 200

/* An animated WebP's canvas, frame count and loop count (0: forever), read before any frame is
 * decoded. Returns a decoder (free with easel_webp_anim_decoder_free) or NULL with a message. */
void *easel_webp_anim_decoder_new(const uint8_t *data, size_t size, int *width, int *height, int *frame_count,
                                  int *loop_count, char *message);

/* The next frame composed on the canvas, as RGBA (straight alpha) into `canvas` (rows of
 * row_bytes), and its end time in ms from the start. 1: a frame; 2: no more frames; 0: error. */
int easel_webp_anim_decoder_next(void *decoder, uint8_t *canvas, size_t row_bytes, int *timestamp_ms);

void easel_webp_anim_decoder_free(void *decoder);

/* An animated WebP encoder for frames of width x height; loop_count 0 loops forever. NULL on
 * failure. */
void *easel_webp_anim_encoder_new(int width, int height, int loop_count, char *message);

/* Adds a frame shown from timestamp_ms on (lossy at quality 0-100, or lossless). 1 or 0. */
int easel_webp_anim_encoder_add(void *encoder, const uint8_t *rgba, size_t row_bytes, int timestamp_ms, int quality,
                                int lossless, char *message);

/* Ends the animation at end_ms and assembles it: *output from WebPMalloc (free with WebPFree).
 * Frees the encoder either way. 1 or 0. */
int easel_webp_anim_encoder_finish(void *encoder, int end_ms, uint8_t **output, size_t *output_size, char *message);

void easel_webp_anim_encoder_free(void *encoder);
#endif
