#include "easel_faces.h"

#include <stdio.h>

#include "easel_lazy.h"

/* libEaselFaces.so (CFaces, with OpenCV), loaded on first use. */
#define FACES_FUNCTIONS(X) X(easel_faces_abi) X(easel_detect) X(easel_face_prepare) X(easel_thumbor_focus)
#define FACES_ENTRY(function) EASEL_LAZY_ENTRY(__typeof__(faces), function)
static struct {
    FACES_FUNCTIONS(EASEL_LAZY_MEMBER)
} faces;
static const easel_lazy_symbol faces_symbols[] = {FACES_FUNCTIONS(FACES_ENTRY)};
static const char *const faces_sonames[] = {"libEaselFaces.so"};
static easel_lazy_library plugin = {faces_sonames, 1, faces_symbols, sizeof faces_symbols / sizeof faces_symbols[0], &faces, 0, ""};

/* 1 when the plugin is loaded, else 0 with the reason in message. */
static int plugin_loaded(char *message) {
    if (!easel_lazy_load(&plugin)) {
        if (message) snprintf(message, EASEL_FACES_MESSAGE_SIZE, "%s", plugin.problem);
        return 0;
    }
    int abi = faces.easel_faces_abi();
    if (abi == EASEL_FACES_ABI) return 1;
    if (message) snprintf(message, EASEL_FACES_MESSAGE_SIZE, "libEaselFaces.so was built from other sources (interface %d, not %d)", abi, EASEL_FACES_ABI);
    return 0;
}

int easel_faces_detect(const uint8_t *gray, int width, int height, size_t row_bytes, const char *cascade_path, int min_side,
                       int max_side, int equalize, double scale_step, int min_neighbors, easel_box *boxes, int max_boxes,
                       char *message) {
    if (!plugin_loaded(message)) return EASEL_LAZY_UNAVAILABLE;
    return faces.easel_detect(gray, width, height, row_bytes, cascade_path, min_side, max_side, equalize, scale_step, min_neighbors,
                              boxes, max_boxes, message);
}

int easel_faces_prepare(const uint8_t *pixels, int channels, int width, int height, size_t row_bytes, int out_width,
                        int out_height, uint8_t *gray, size_t gray_row_bytes, int block, uint8_t *skin, int *coloured,
                        char *message) {
    if (!plugin_loaded(message)) return EASEL_LAZY_UNAVAILABLE;
    return faces.easel_face_prepare(pixels, channels, width, height, row_bytes, out_width, out_height, gray, gray_row_bytes, block,
                                    skin, coloured, message);
}

int easel_faces_thumbor_focus(const uint8_t *gray, int width, int height, size_t row_bytes, const char *cascade_path,
                              easel_focal_point *points, int max_points, char *message) {
    if (!plugin_loaded(message)) return EASEL_LAZY_UNAVAILABLE;
    return faces.easel_thumbor_focus(gray, width, height, row_bytes, cascade_path, points, max_points, message);
}
