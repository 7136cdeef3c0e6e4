#include "easel_avif.h"

#include <avif/avif.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "easel_lazy.h"

/* libavif is loaded on first use (easel_lazy.h), not linked: it brings its codecs' libraries. */
#define AVIF_FUNCTIONS(X, T)                                                                                         \
    X(T, avifDecoderCreate) X(T, avifDecoderDestroy) X(T, avifDecoderNextImage) X(T, avifDecoderParse)               \
    X(T, avifDecoderSetIOMemory) X(T, avifEncoderCreate) X(T, avifEncoderDestroy) X(T, avifEncoderWrite) X(T, avifImageCreate) \
    X(T, avifImageDestroy) X(T, avifImageRGBToYUV) X(T, avifImageYUVToRGB) X(T, avifRGBImageSetDefaults) X(T, avifRWDataFree) \
    X(T, avifResultToString) X(T, avifVersion)
/* The soname of the libavif whose headers this is built with: its structs are read field by
 * field, so a library of another ABI must never be loaded in its place. */
#if AVIF_VERSION_MAJOR == 0 && AVIF_VERSION_MINOR == 11
#define AVIF_SONAME "libavif.so.15"
#elif AVIF_VERSION_MAJOR == 1
#define AVIF_SONAME "libavif.so.16"
#else
#error "the soname of this libavif version is not known here: add it (and to scripts/image.sh)"
#endif
static int libavif_verify(char *problem, size_t size);
EASEL_LAZY_LIBRARY(libavif, avif, AVIF_FUNCTIONS, libavif_verify, AVIF_SONAME);

/* The same major version and at least the minor one the headers are. */
static int libavif_verify(char *problem, size_t size) {
    unsigned major = 0, minor = 0;
    const char *version = avif.avifVersion();
    if (sscanf(version, "%u.%u", &major, &minor) == 2 && major == AVIF_VERSION_MAJOR && minor >= AVIF_VERSION_MINOR) return 1;
    snprintf(problem, size, "libavif %s is loaded; easel was built for %d.%d", version, AVIF_VERSION_MAJOR, AVIF_VERSION_MINOR);
    return 0;
}

static void set_message(char *message, const char *text) {
    if (message) snprintf(message, EASEL_AVIF_MESSAGE_SIZE, "%s", text);
}

/* A decoder over the bytes, parsed (no pixels decoded yet); NULL on failure, with *limited 1
 * when the image has more than max_pixels pixels (its size then in *width, *height) and 2 when
 * it has more than max_frames frames. */
static avifDecoder *open_decoder(const uint8_t *data, size_t size, uint32_t max_pixels, uint32_t max_frames,
                                 int *limited, int *width, int *height, char *message) {
    *limited = 0;
    avifDecoder *decoder = avif.avifDecoderCreate();
    if (!decoder) {
        set_message(message, "out of memory");
        return NULL;
    }
    decoder->maxThreads = 1;
    /* libavif's own size limit stays at its default (16384 x 16384): ours is checked below,
     * after parsing, which reads the container only (pixel memory comes with the first frame). */
    decoder->imageCountLimit = max_frames;
    decoder->ignoreExif = AVIF_TRUE;
    decoder->ignoreXMP = AVIF_TRUE;
    avifResult result = avif.avifDecoderSetIOMemory(decoder, data, size);
    if (result == AVIF_RESULT_OK) result = avif.avifDecoderParse(decoder);
    if (result != AVIF_RESULT_OK) {
        const char *detail = decoder->diag.error[0] ? decoder->diag.error : avif.avifResultToString(result);
        if (strstr(detail, "imageCountLimit") || strstr(detail, "count limit") || strstr(detail, "too many")) *limited = 2;
        snprintf(message, EASEL_AVIF_MESSAGE_SIZE, "%s", detail);
        avif.avifDecoderDestroy(decoder);
        return NULL;
    }
    *width = (int)decoder->image->width;
    *height = (int)decoder->image->height;
    if ((uint64_t)decoder->image->width * decoder->image->height > max_pixels) {
        set_message(message, "image over the pixel limit");
        *limited = 1;
    } else if ((uint32_t)decoder->imageCount > max_frames) {
        set_message(message, "image over the frame limit");
        *limited = 2;
    }
    if (*limited) {
        avif.avifDecoderDestroy(decoder);
        return NULL;
    }
    return decoder;
}

int easel_avif_read_header(const uint8_t *data, size_t size, uint32_t max_pixels, uint32_t max_frames,
                           easel_avif_header *header, size_t max_icc, uint8_t **icc, size_t *icc_size, char *message) {
    *icc = NULL;
    *icc_size = 0;
    if (!easel_lazy_require(&libavif, message, EASEL_AVIF_MESSAGE_SIZE)) return EASEL_LAZY_UNAVAILABLE;
    int limited;
    avifDecoder *decoder = open_decoder(data, size, max_pixels, max_frames, &limited, &header->width, &header->height, message);
    if (!decoder) return -limited;
    avifImage *image = decoder->image;
    header->width = (int)image->width;
    header->height = (int)image->height;
    header->depth = (int)image->depth;
    header->has_alpha = decoder->alphaPresent ? 1 : 0;
    header->frame_count = decoder->imageCount;
    header->rotation = (image->transformFlags & AVIF_TRANSFORM_IROT) ? (int)(image->irot.angle & 3) : 0;
#if AVIF_VERSION_MAJOR >= 1
    /* libavif 1.0 renamed the field back to axis, with the same meaning (0: top and bottom exchanged). */
    header->mirror = (image->transformFlags & AVIF_TRANSFORM_IMIR) ? (int)(image->imir.axis & 1) : -1;
#else
    header->mirror = (image->transformFlags & AVIF_TRANSFORM_IMIR) ? (int)(image->imir.mode & 1) : -1;
#endif
    header->color_primaries = (int)image->colorPrimaries;
    header->transfer = (int)image->transferCharacteristics;
    if (image->icc.size > 0) {
        *icc_size = image->icc.size;
        if (image->icc.size <= max_icc && (*icc = malloc(image->icc.size))) memcpy(*icc, image->icc.data, image->icc.size);
    }
    avif.avifDecoderDestroy(decoder);
    return 1;
}

int easel_avif_decode(const uint8_t *data, size_t size, uint32_t max_pixels, uint32_t max_frames, int width, int height,
                      uint8_t *pixels, size_t row_bytes, char *message) {
    if (!easel_lazy_require(&libavif, message, EASEL_AVIF_MESSAGE_SIZE)) return EASEL_LAZY_UNAVAILABLE;
    int limited, opened_width, opened_height;
    avifDecoder *decoder = open_decoder(data, size, max_pixels, max_frames, &limited, &opened_width, &opened_height, message);
    if (!decoder) return -limited;
    int ok = 0;
    avifResult result = avif.avifDecoderNextImage(decoder);
    if (result != AVIF_RESULT_OK) {
        set_message(message, avif.avifResultToString(result));
    } else if ((int)decoder->image->width != width || (int)decoder->image->height != height) {
        set_message(message, "AVIF size differs from the size it was opened with");
    } else {
        avifRGBImage rgb;
        avif.avifRGBImageSetDefaults(&rgb, decoder->image);
        rgb.format = AVIF_RGB_FORMAT_RGBA;
        rgb.depth = 8;
        rgb.pixels = pixels;
        rgb.rowBytes = (uint32_t)row_bytes;
        result = avif.avifImageYUVToRGB(decoder->image, &rgb);
        if (result == AVIF_RESULT_OK) ok = 1; else set_message(message, avif.avifResultToString(result));
    }
    avif.avifDecoderDestroy(decoder);
    return ok;
}

int easel_avif_encode(const uint8_t *pixels, int width, int height, size_t row_bytes, int has_alpha, int quality,
                      int speed, int threads, uint8_t **output, size_t *output_size, char *message) {
    *output = NULL;
    *output_size = 0;
    if (!easel_lazy_require(&libavif, message, EASEL_AVIF_MESSAGE_SIZE)) return EASEL_LAZY_UNAVAILABLE;
    avifImage *image = avif.avifImageCreate((uint32_t)width, (uint32_t)height, 8, AVIF_PIXEL_FORMAT_YUV420);
    avifEncoder *encoder = avif.avifEncoderCreate();
    avifRWData encoded = AVIF_DATA_EMPTY;
    int ok = 0;
    if (!image || !encoder) {
        set_message(message, "out of memory");
        goto done;
    }
    /* sRGB: BT.709 primaries, the sRGB transfer, BT.601 matrix (what browsers assume), full range. */
    image->colorPrimaries = AVIF_COLOR_PRIMARIES_BT709;
    image->transferCharacteristics = AVIF_TRANSFER_CHARACTERISTICS_SRGB;
    image->matrixCoefficients = AVIF_MATRIX_COEFFICIENTS_BT601;
    image->yuvRange = AVIF_RANGE_FULL;
    avifRGBImage rgb;
    avif.avifRGBImageSetDefaults(&rgb, image);
    rgb.format = AVIF_RGB_FORMAT_RGBA;
    rgb.depth = 8;
    rgb.ignoreAlpha = has_alpha ? AVIF_FALSE : AVIF_TRUE;
    rgb.pixels = (uint8_t *)pixels;
    rgb.rowBytes = (uint32_t)row_bytes;
    avifResult result = avif.avifImageRGBToYUV(image, &rgb);
    if (result != AVIF_RESULT_OK) {
        set_message(message, avif.avifResultToString(result));
        goto done;
    }
    if (quality < 1) quality = 1;
    if (quality > 100) quality = 100;
    int quantizer = ((100 - quality) * 63 + 50) / 100;
    encoder->codecChoice = AVIF_CODEC_CHOICE_AOM;
    encoder->maxThreads = threads < 1 ? 1 : threads;
    encoder->speed = speed < 0 ? 0 : speed > 10 ? 10 : speed;
    encoder->minQuantizer = quantizer;
    encoder->maxQuantizer = quantizer;
    encoder->minQuantizerAlpha = quantizer;
    encoder->maxQuantizerAlpha = quantizer;
    result = avif.avifEncoderWrite(encoder, image, &encoded);
    if (result != AVIF_RESULT_OK) {
        set_message(message, avif.avifResultToString(result));
        goto done;
    }
    *output = malloc(encoded.size);
    if (!*output) {
        set_message(message, "out of memory");
        goto done;
    }
    memcpy(*output, encoded.data, encoded.size);
    *output_size = encoded.size;
    ok = 1;
done:
    avif.avifRWDataFree(&encoded);
    if (encoder) avif.avifEncoderDestroy(encoder);
    if (image) avif.avifImageDestroy(image);
    return ok;
}

void easel_avif_free(void *buffer) {
    free(buffer);
}
