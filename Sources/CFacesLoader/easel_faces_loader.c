#include "easel_faces.h"

#include <stdio.h>

#include "easel_lazy.h"

/* libEaselFaces.so (CFaces, with OpenCV), loaded on first use. */
#define FACES_FUNCTIONS(X, T) X(T, easel_faces_abi) X(T, easel_detect) X(T, easel_face_prepare) X(T, easel_thumbor_focus)
static int plugin_verify(char *problem, size_t size);
EASEL_LAZY_LIBRARY(plugin, faces, FACES_FUNCTIONS, plugin_verify, "libEaselFaces.so");

/* The plugin's interface is this header's: a stale libEaselFaces.so is refused. */
static int plugin_verify(char *problem, size_t size) {
    int abi = faces.easel_faces_abi();
    if (abi == EASEL_FACES_ABI) return 1;
    snprintf(problem, size, "libEaselFaces.so was built from other sources (interface %d, not %d)", abi, EASEL_FACES_ABI);
    return 0;
}

int easel_faces_detect(const uint8_t *gray, int width, int height, size_t row_bytes, const char *cascade_path, int min_side,
                       int max_side, int equalize, double scale_step, int min_neighbors, easel_box *boxes, int max_boxes,
                       char *message) {
    if (!easel_lazy_require(&plugin, message, EASEL_FACES_MESSAGE_SIZE)) return EASEL_LAZY_UNAVAILABLE;
    return faces.easel_detect(gray, width, height, row_bytes, cascade_path, min_side, max_side, equalize, scale_step, min_neighbors,
                              boxes, max_boxes, message);
}

int easel_faces_prepare(const uint8_t *pixels, int channels, int width, int height, size_t row_bytes, int out_width,
                        int out_height, uint8_t *gray, size_t gray_row_bytes, int block, uint8_t *skin, int *coloured,
                        char *message) {
    if (!easel_lazy_require(&plugin, message, EASEL_FACES_MESSAGE_SIZE)) return EASEL_LAZY_UNAVAILABLE;
    return faces.easel_face_prepare(pixels, channels, width, height, row_bytes, out_width, out_height, gray, gray_row_bytes, block,
                                    skin, coloured, message);
}

int easel_faces_thumbor_focus(const uint8_t *gray, int width, int height, size_t row_bytes, const char *cascade_path,
                              easel_focal_point *points, int max_points, char *message) {
    if (!easel_lazy_require(&plugin, message, EASEL_FACES_MESSAGE_SIZE)) return EASEL_LAZY_UNAVAILABLE;
    return faces.easel_thumbor_focus(gray, width, height, row_bytes, cascade_path, points, max_points, message);
}
