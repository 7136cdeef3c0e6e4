#include "easel_webp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <webp/mux.h>

static void set_message(char *message, const char *text) {
    if (message) snprintf(message, EASEL_WEBP_MESSAGE_SIZE, "%s", text);
}

void *easel_webp_anim_decoder_new(const uint8_t *data, size_t size, int *width, int *height, int *frame_count,
                                  int *loop_count, char *message) {
    WebPAnimDecoderOptions options;
    if (!WebPAnimDecoderOptionsInit(&options)) {
        set_message(message, "libwebp version mismatch");
        return NULL;
    }
    options.color_mode = MODE_RGBA;
    options.use_threads = 0;
    WebPData webp = {data, size};
    WebPAnimDecoder *decoder = WebPAnimDecoderNew(&webp, &options);
    if (!decoder) {
        set_message(message, "unreadable animated WebP");
        return NULL;
    }
    WebPAnimInfo info;
    if (!WebPAnimDecoderGetInfo(decoder, &info)) {
        set_message(message, "unreadable animated WebP header");
        WebPAnimDecoderDelete(decoder);
        return NULL;
    }
    *width = (int)info.canvas_width;
    *height = (int)info.canvas_height;
    *frame_count = (int)info.frame_count;
    *loop_count = (int)info.loop_count;
    return decoder;
}

int easel_webp_anim_decoder_next(void *decoder, uint8_t *canvas, size_t row_bytes, int *timestamp_ms) {
    WebPAnimDecoder *animation = (WebPAnimDecoder *)decoder;
    if (!WebPAnimDecoderHasMoreFrames(animation)) return 2;
    uint8_t *frame = NULL;
    int timestamp = 0;
    if (!WebPAnimDecoderGetNext(animation, &frame, &timestamp) || !frame) return 0;
    WebPAnimInfo info;
    if (!WebPAnimDecoderGetInfo(animation, &info)) return 0;
    size_t tight = (size_t)info.canvas_width * 4;
    for (uint32_t y = 0; y < info.canvas_height; y++) memcpy(canvas + (size_t)y * row_bytes, frame + (size_t)y * tight, tight);
    *timestamp_ms = timestamp;
    return 1;
}

void easel_webp_anim_decoder_free(void *decoder) {
    if (decoder) WebPAnimDecoderDelete((WebPAnimDecoder *)decoder);
}

typedef struct {
    WebPAnimEncoder *encoder;
    int width;
    int height;
    int loop_count;
} easel_anim_encoder;

void *easel_webp_anim_encoder_new(int width, int height, int loop_count, char *message) {
    WebPAnimEncoderOptions options;
    if (!WebPAnimEncoderOptionsInit(&options)) {
        set_message(message, "libwebp version mismatch");
        return NULL;
    }
    options.anim_params.loop_count = loop_count;
    options.allow_mixed = 0;
    easel_anim_encoder *state = calloc(1, sizeof *state);
    if (!state) {
        set_message(message, "out of memory");
        return NULL;
    }
    state->encoder = WebPAnimEncoderNew(width, height, &options);
    if (!state->encoder) {
        set_message(message, "libwebp refused the animation's size");
        free(state);
        return NULL;
    }
    state->width = width;
    state->height = height;
    state->loop_count = loop_count;
    return state;
}

int easel_webp_anim_encoder_add(void *encoder, const uint8_t *rgba, size_t row_bytes, int timestamp_ms, int quality,
                                int lossless, char *message) {
    easel_anim_encoder *state = (easel_anim_encoder *)encoder;
    WebPConfig config;
    WebPPicture picture;
    if (!WebPConfigInit(&config) || !WebPPictureInit(&picture)) {
        set_message(message, "libwebp version mismatch");
        return 0;
    }
    config.lossless = lossless ? 1 : 0;
    config.quality = (float)(quality < 0 ? 0 : quality > 100 ? 100 : quality);
    picture.use_argb = 1;
    picture.width = state->width;
    picture.height = state->height;
    int ok = WebPPictureImportRGBA(&picture, rgba, (int)row_bytes) &&
             WebPAnimEncoderAdd(state->encoder, &picture, timestamp_ms, &config);
    if (!ok) set_message(message, WebPAnimEncoderGetError(state->encoder));
    WebPPictureFree(&picture);
    return ok;
}

int easel_webp_anim_encoder_finish(void *encoder, int end_ms, uint8_t **output, size_t *output_size, char *message) {
    easel_anim_encoder *state = (easel_anim_encoder *)encoder;
    WebPData assembled;
    WebPDataInit(&assembled);
    int ok = WebPAnimEncoderAdd(state->encoder, NULL, end_ms, NULL) && WebPAnimEncoderAssemble(state->encoder, &assembled);
    if (!ok) {
        set_message(message, WebPAnimEncoderGetError(state->encoder));
    } else {
        *output = (uint8_t *)assembled.bytes;
        *output_size = assembled.size;
    }
    easel_webp_anim_encoder_free(encoder);
    return ok;
}

void easel_webp_anim_encoder_free(void *encoder) {
    easel_anim_encoder *state = (easel_anim_encoder *)encoder;
    if (!state) return;
    WebPAnimEncoderDelete(state->encoder);
    free(state);
}
