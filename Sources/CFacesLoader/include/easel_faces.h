#ifndef EASEL_FACES_H
#define EASEL_FACES_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Object detection with OpenCV's Haar cascades (Debian's libopencv-objdetect and the cascades
 * of opencv-data): faces, and eyes inside them. Each thread keeps its own loaded cascades
 * (detection is not safe to share), loaded once per path.
 *
 * OpenCV's objdetect brings some fifteen libraries (its DNN module, protobuf, LAPACK, BLAS,
 * Fortran's runtime), so the detector is a plugin: CFaces builds libEaselFaces.so (the
 * package's EaselFaces product) with easel_detect, easel_face_prepare and easel_thumbor_focus,
 * and easel calls them through easel_faces_detect, easel_faces_prepare and
 * easel_faces_thumbor_focus below, which load the plugin on first use from the executable's
 * directory (its RUNPATH's $ORIGIN). They return EASEL_LAZY_UNAVAILABLE, with the reason, when
 * it cannot be loaded; otherwise what the plugin's function returns. */

#define EASEL_FACES_MESSAGE_SIZE 200

typedef struct {
    int x;
    int y;
    int width;
    int height;
} easel_box;

/* Finds the cascade's objects in an 8-bit gray image (its histogram equalized first when
 * `equalize` is not 0), from min_side to max_side pixels a side (max_side 0: no upper bound):
 * OpenCV's detectMultiScale with scale steps of scale_step (1.1-1.3) and min_neighbors (3-5
 * suit faces). Writes at most max_boxes boxes and returns how many it found (possibly more),
 * or -1 with a message (the cascade could not be loaded, or OpenCV failed). */
int easel_detect(const uint8_t *gray, int width, int height, size_t row_bytes, const char *cascade_path, int min_side,
                 int max_side, int equalize, double scale_step, int min_neighbors, easel_box *boxes, int max_boxes,
                 char *message);

/* The copy faces are looked for on: `pixels` (RGBA when channels is 4, gray when 1) resized to
 * out_width x out_height (OpenCV's area average to shrink, bilinear to enlarge) and made gray
 * into `gray` (written in place, gray_row_bytes a row). With RGBA, `skin` (when not null) gets
 * one byte per block of block x block pixels of the resized copy, row-major: 1 where the block's
 * mean colour is skin-toned (YCbCr: Y > 40, Cb 77-127, Cr 133-173), and `coloured` how many
 * blocks have colour at all (channels more than 24 levels apart). Returns 0, or -1 with a
 * message. */
int easel_face_prepare(const uint8_t *pixels, int channels, int width, int height, size_t row_bytes, int out_width,
                       int out_height, uint8_t *gray, size_t gray_row_bytes, int block, uint8_t *skin, int *coloured,
                       char *message);

/* A point of interest: x, y, its weight and the box it stands for (a face's; 1 x 1 for a
 * corner), and whether it is a face. */
typedef struct {
    double x;
    double y;
    double weight;
    int width;
    int height;
    int is_face;
} easel_focal_point;

/* thumbor's smart detectors on an 8-bit gray image, as thumbor 7 runs them: the faces of the
 * cascade (no equalization; scale steps of 1.2, 4 neighbours, faces at least max(20, shorter
 * side / 15) pixels), each as its centre (the box raised by 12% of its height for the hair,
 * unless that leaves the image; thumbor's integer halves) weighted by its area; without faces,
 * OpenCV's goodFeaturesToTrack (20 corners, quality 0.04, 1 pixel apart), each weighing 1.
 * Writes at most max_points points and returns how many it wrote (0: none found), or -1 with a
 * message. */
int easel_thumbor_focus(const uint8_t *gray, int width, int height, size_t row_bytes, const char *cascade_path,
                        easel_focal_point *points, int max_points, char *message);

/* The plugin's interface, as its structs lay it out: a plugin built from other sources (a stale
 * libEaselFaces.so beside a new easel) is refused instead of called with other layouts. */
#define EASEL_FACES_ABI ((int)(1000000 + sizeof(easel_box) * 1000 + sizeof(easel_focal_point)))
int easel_faces_abi(void);

/* The plugin's functions, loaded on first use: the same arguments and results, or
 * EASEL_LAZY_UNAVAILABLE (easel_lazy.h) with the reason in message. */
int easel_faces_detect(const uint8_t *gray, int width, int height, size_t row_bytes, const char *cascade_path, int min_side,
                       int max_side, int equalize, double scale_step, int min_neighbors, easel_box *boxes, int max_boxes,
                       char *message);
int easel_faces_prepare(const uint8_t *pixels, int channels, int width, int height, size_t row_bytes, int out_width,
                        int out_height, uint8_t *gray, size_t gray_row_bytes, int block, uint8_t *skin, int *coloured,
                        char *message);
int easel_faces_thumbor_focus(const uint8_t *gray, int width, int height, size_t row_bytes, const char *cascade_path,
                              easel_focal_point *points, int max_points, char *message);

#ifdef __cplusplus
}
#endif

#endif
