#include "easel_jxl.h"

#include <jxl/decode.h>
#include <jxl/encode.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "easel_lazy.h"

/* libjxl is loaded on first use (easel_lazy.h), not linked: it brings its codecs' libraries. */
#define JXL_FUNCTIONS(X, T)                                                                                          \
    X(T, JxlColorEncodingSetToSRGB) X(T, JxlDecoderCloseInput) X(T, JxlDecoderCreate) X(T, JxlDecoderDestroy)        \
    X(T, JxlDecoderGetBasicInfo) X(T, JxlDecoderGetColorAsEncodedProfile) X(T, JxlDecoderGetColorAsICCProfile)       \
    X(T, JxlDecoderGetICCProfileSize) X(T, JxlDecoderImageOutBufferSize) X(T, JxlDecoderProcessInput)                \
    X(T, JxlDecoderSetImageOutBuffer) X(T, JxlDecoderSetInput) X(T, JxlDecoderSetKeepOrientation)                    \
    X(T, JxlDecoderSubscribeEvents) X(T, JxlEncoderAddImageFrame) X(T, JxlEncoderCloseInput) X(T, JxlEncoderCreate)  \
    X(T, JxlEncoderDestroy) X(T, JxlEncoderFrameSettingsCreate) X(T, JxlEncoderFrameSettingsSetOption)               \
    X(T, JxlEncoderInitBasicInfo) X(T, JxlEncoderProcessOutput) X(T, JxlEncoderSetBasicInfo)                         \
    X(T, JxlEncoderSetColorEncoding) X(T, JxlEncoderSetFrameDistance) X(T, JxlEncoderSetFrameLossless) X(T, JxlDecoderVersion)
/* The soname of the libjxl whose headers this is built with (0.x: major and minor). */
#define JXL_STRING(x) #x
#define JXL_VERSION_TEXT(x) JXL_STRING(x)
#if JPEGXL_MAJOR_VERSION == 0
#define JXL_SONAME "libjxl.so.0." JXL_VERSION_TEXT(JPEGXL_MINOR_VERSION)
#else
#define JXL_SONAME "libjxl.so." JXL_VERSION_TEXT(JPEGXL_MAJOR_VERSION)
#endif
static int libjxl_verify(char *problem, size_t size);
EASEL_LAZY_LIBRARY(libjxl, jxl, JXL_FUNCTIONS, libjxl_verify, JXL_SONAME);

/* The version the headers are: 0.x the same minor; else the same major and at least the minor. */
static int libjxl_verify(char *problem, size_t size) {
    uint32_t version = jxl.JxlDecoderVersion(), major = version / 1000000, minor = version / 1000 % 1000;
    if (major == JPEGXL_MAJOR_VERSION && (major == 0 ? minor == JPEGXL_MINOR_VERSION : minor >= JPEGXL_MINOR_VERSION)) return 1;
    snprintf(problem, size, "libjxl %u.%u is loaded; easel was built for %d.%d", major, minor, JPEGXL_MAJOR_VERSION, JPEGXL_MINOR_VERSION);
    return 0;
}

static int fail(char *message, const char *text) {
    snprintf(message, EASEL_JXL_MESSAGE_SIZE, "%s", text);
    return 0;
}

/* Runs the decoder until `stop` (an event subscribed) or the end; the last status. */
static JxlDecoderStatus run_until(JxlDecoder *decoder, JxlDecoderStatus stop, uint8_t *pixels, size_t row_bytes, size_t buffer_size,
                                  JxlBasicInfo *basic) {
    for (;;) {
        JxlDecoderStatus status = jxl.JxlDecoderProcessInput(decoder);
        if (status == JXL_DEC_BASIC_INFO) {
            if (jxl.JxlDecoderGetBasicInfo(decoder, basic) != JXL_DEC_SUCCESS) return JXL_DEC_ERROR;
            if (stop == JXL_DEC_BASIC_INFO) return status;
            continue;
        }
        if (status == JXL_DEC_NEED_IMAGE_OUT_BUFFER) {
            if (!pixels) return JXL_DEC_ERROR;
            JxlPixelFormat format = {4, JXL_TYPE_UINT8, JXL_NATIVE_ENDIAN, row_bytes};
            size_t needed = 0;
            if (jxl.JxlDecoderImageOutBufferSize(decoder, &format, &needed) != JXL_DEC_SUCCESS || needed > buffer_size) return JXL_DEC_ERROR;
            if (jxl.JxlDecoderSetImageOutBuffer(decoder, &format, pixels, needed) != JXL_DEC_SUCCESS) return JXL_DEC_ERROR;
            continue;
        }
        if (status == stop || status == JXL_DEC_SUCCESS || status == JXL_DEC_ERROR || status == JXL_DEC_NEED_MORE_INPUT) return status;
    }
}

static JxlDecoder *open_decoder(const uint8_t *data, size_t size, int events) {
    JxlDecoder *decoder = jxl.JxlDecoderCreate(NULL);
    if (!decoder) return NULL;
    if (jxl.JxlDecoderSubscribeEvents(decoder, events) != JXL_DEC_SUCCESS || jxl.JxlDecoderSetKeepOrientation(decoder, JXL_TRUE) != JXL_DEC_SUCCESS ||
        jxl.JxlDecoderSetInput(decoder, data, size) != JXL_DEC_SUCCESS) {
        jxl.JxlDecoderDestroy(decoder);
        return NULL;
    }
    jxl.JxlDecoderCloseInput(decoder);
    return decoder;
}

static int status_failure(JxlDecoderStatus status, char *message) {
    return fail(message, status == JXL_DEC_NEED_MORE_INPUT ? "truncated" : "libjxl could not decode it");
}

int easel_jxl_read_info(const uint8_t *data, size_t size, easel_jxl_info *info, uint8_t *icc, size_t icc_capacity, char *message) {
    memset(info, 0, sizeof(*info));
    if (!easel_lazy_require(&libjxl, message, EASEL_JXL_MESSAGE_SIZE)) return EASEL_LAZY_UNAVAILABLE;
    JxlDecoder *decoder = open_decoder(data, size, JXL_DEC_BASIC_INFO | JXL_DEC_COLOR_ENCODING);
    if (!decoder) return fail(message, "libjxl could not start");
    JxlBasicInfo basic;
    memset(&basic, 0, sizeof(basic));
    JxlDecoderStatus status = run_until(decoder, JXL_DEC_COLOR_ENCODING, NULL, 0, 0, &basic);
    if (status != JXL_DEC_COLOR_ENCODING) {
        int result = status_failure(status, message);
        jxl.JxlDecoderDestroy(decoder);
        return result;
    }
    info->width = basic.xsize;
    info->height = basic.ysize;
    info->has_alpha = basic.alpha_bits > 0;
    info->is_gray = basic.num_color_channels == 1;
    info->is_animated = basic.have_animation ? 1 : 0;
    info->bits_per_sample = (int)basic.bits_per_sample;
    info->orientation = basic.orientation >= 1 && basic.orientation <= 8 ? (int)basic.orientation : 1;
    JxlPixelFormat format = {4, JXL_TYPE_UINT8, JXL_NATIVE_ENDIAN, 0};
    /* sRGB, or gray with sRGB's curve (what a gray PNG is taken as): no profile to convert by. */
    JxlColorEncoding encoding;
    if (jxl.JxlDecoderGetColorAsEncodedProfile(decoder, NULL, JXL_COLOR_PROFILE_TARGET_DATA, &encoding) == JXL_DEC_SUCCESS &&
        encoding.transfer_function == JXL_TRANSFER_FUNCTION_SRGB && encoding.white_point == JXL_WHITE_POINT_D65 &&
        (encoding.color_space == JXL_COLOR_SPACE_GRAY || (encoding.color_space == JXL_COLOR_SPACE_RGB && encoding.primaries == JXL_PRIMARIES_SRGB))) {
        jxl.JxlDecoderDestroy(decoder);
        return 1;
    }
    size_t icc_size = 0;
    if (jxl.JxlDecoderGetICCProfileSize(decoder, &format, JXL_COLOR_PROFILE_TARGET_DATA, &icc_size) == JXL_DEC_SUCCESS && icc_size > 0) {
        info->icc_size = icc_size;
        if (icc && icc_size <= icc_capacity &&
            jxl.JxlDecoderGetColorAsICCProfile(decoder, &format, JXL_COLOR_PROFILE_TARGET_DATA, icc, icc_size) != JXL_DEC_SUCCESS)
            info->icc_size = 0;
    }
    jxl.JxlDecoderDestroy(decoder);
    return 1;
}

int easel_jxl_decode(const uint8_t *data, size_t size, uint8_t *pixels, size_t row_bytes, int width, int height, char *message) {
    if (!easel_lazy_require(&libjxl, message, EASEL_JXL_MESSAGE_SIZE)) return EASEL_LAZY_UNAVAILABLE;
    JxlDecoder *decoder = open_decoder(data, size, JXL_DEC_BASIC_INFO | JXL_DEC_FULL_IMAGE);
    if (!decoder) return fail(message, "libjxl could not start");
    JxlBasicInfo basic;
    memset(&basic, 0, sizeof(basic));
    JxlDecoderStatus status = run_until(decoder, JXL_DEC_BASIC_INFO, NULL, 0, 0, &basic);
    if (status != JXL_DEC_BASIC_INFO) {
        int result = status_failure(status, message);
        jxl.JxlDecoderDestroy(decoder);
        return result;
    }
    if ((int64_t)basic.xsize != width || (int64_t)basic.ysize != height) {
        jxl.JxlDecoderDestroy(decoder);
        return fail(message, "the image changed size");
    }
    /* (An image without alpha comes with 255 in the fourth byte; a gray one as RGB.) */
    status = run_until(decoder, JXL_DEC_FULL_IMAGE, pixels, row_bytes, row_bytes * (size_t)height, &basic);
    int result = status == JXL_DEC_FULL_IMAGE ? 1 : status_failure(status, message);
    jxl.JxlDecoderDestroy(decoder);
    return result;
}

int easel_jxl_encode(const uint8_t *pixels, size_t row_bytes, int width, int height, int has_alpha, int quality, int effort,
                     uint8_t **output, size_t *output_size, char *message) {
    *output = NULL;
    *output_size = 0;
    if (!easel_lazy_require(&libjxl, message, EASEL_JXL_MESSAGE_SIZE)) return EASEL_LAZY_UNAVAILABLE;
    JxlEncoder *encoder = jxl.JxlEncoderCreate(NULL);
    if (!encoder) return fail(message, "libjxl could not start");
    JxlBasicInfo basic;
    jxl.JxlEncoderInitBasicInfo(&basic);
    basic.xsize = (uint32_t)width;
    basic.ysize = (uint32_t)height;
    basic.bits_per_sample = 8;
    basic.num_color_channels = 3;
    basic.alpha_bits = has_alpha ? 8 : 0;
    basic.num_extra_channels = has_alpha ? 1 : 0;
    int lossless = quality >= 100;
    basic.uses_original_profile = lossless ? JXL_TRUE : JXL_FALSE;
    JxlColorEncoding color;
    jxl.JxlColorEncodingSetToSRGB(&color, JXL_FALSE);
    JxlEncoderFrameSettings *settings = NULL;
    if (jxl.JxlEncoderSetBasicInfo(encoder, &basic) != JXL_ENC_SUCCESS || jxl.JxlEncoderSetColorEncoding(encoder, &color) != JXL_ENC_SUCCESS ||
        !(settings = jxl.JxlEncoderFrameSettingsCreate(encoder, NULL))) {
        jxl.JxlEncoderDestroy(encoder);
        return fail(message, "libjxl refused the settings");
    }
    jxl.JxlEncoderFrameSettingsSetOption(settings, JXL_ENC_FRAME_SETTING_EFFORT, effort < 1 ? 1 : effort > 9 ? 9 : effort);
    if (lossless) {
        jxl.JxlEncoderSetFrameLossless(settings, JXL_TRUE);
        jxl.JxlEncoderSetFrameDistance(settings, 0);
    } else {
        /* cjxl's mapping of a quality to a Butteraugli distance. */
        double q = quality < 1 ? 1 : quality;
        double distance = q >= 30 ? 0.1 + (100 - q) * 0.09 : 6.4 + pow(2.5, (30 - q) / 5.0) / 6.25;
        jxl.JxlEncoderSetFrameDistance(settings, (float)distance);
    }
    JxlPixelFormat format = {has_alpha ? 4 : 3, JXL_TYPE_UINT8, JXL_NATIVE_ENDIAN, 0};
    /* libjxl takes tightly packed rows of `channels` bytes a pixel: repacked here. */
    size_t channels = has_alpha ? 4 : 3, packed_row = (size_t)width * channels;
    uint8_t *packed = (uint8_t *)malloc(packed_row * (size_t)height);
    if (!packed) { jxl.JxlEncoderDestroy(encoder); return fail(message, "out of memory"); }
    for (int y = 0; y < height; y++) {
        const uint8_t *in = pixels + (size_t)y * row_bytes;
        uint8_t *out = packed + (size_t)y * packed_row;
        if (has_alpha) memcpy(out, in, packed_row);
        else for (int x = 0; x < width; x++) { out[x * 3] = in[x * 4]; out[x * 3 + 1] = in[x * 4 + 1]; out[x * 3 + 2] = in[x * 4 + 2]; }
    }
    JxlEncoderStatus added = jxl.JxlEncoderAddImageFrame(settings, &format, packed, packed_row * (size_t)height);
    free(packed);
    if (added != JXL_ENC_SUCCESS) { jxl.JxlEncoderDestroy(encoder); return fail(message, "libjxl refused the frame"); }
    jxl.JxlEncoderCloseInput(encoder);
    size_t capacity = 64 * 1024, used = 0;
    uint8_t *buffer = (uint8_t *)malloc(capacity);
    JxlEncoderStatus status = JXL_ENC_NEED_MORE_OUTPUT;
    while (buffer && status == JXL_ENC_NEED_MORE_OUTPUT) {
        uint8_t *next = buffer + used;
        size_t available = capacity - used;
        status = jxl.JxlEncoderProcessOutput(encoder, &next, &available);
        used = (size_t)(next - buffer);
        if (status == JXL_ENC_NEED_MORE_OUTPUT) {
            capacity *= 2;
            uint8_t *grown = (uint8_t *)realloc(buffer, capacity);
            if (!grown) { free(buffer); buffer = NULL; }
            else buffer = grown;
        }
    }
    jxl.JxlEncoderDestroy(encoder);
    if (!buffer || status != JXL_ENC_SUCCESS) {
        free(buffer);
        return fail(message, "libjxl could not encode");
    }
    *output = buffer;
    *output_size = used;
    return 1;
}
