#include "easel_faces.h"

#include <opencv2/core.hpp>
#include <opencv2/core/utility.hpp>
#include <opencv2/imgproc.hpp>
#include <opencv2/objdetect.hpp>

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace {

void set_message(char *message, const char *text) {
    if (message) std::snprintf(message, EASEL_FACES_MESSAGE_SIZE, "%s", text);
}

/* The cascades this thread loaded, by path. */
thread_local std::map<std::string, std::unique_ptr<cv::CascadeClassifier>> loaded;
std::once_flag single_threaded;

/* This thread's cascade for `path`, loaded on first use; null with a message when it cannot be. */
cv::CascadeClassifier *cascade(const char *path, char *message) {
    // The callers' pool is the parallelism: OpenCV's own threads would only contend with it.
    std::call_once(single_threaded, [] { cv::setNumThreads(0); });
    auto &slot = loaded[path];
    if (!slot) {
        auto classifier = std::make_unique<cv::CascadeClassifier>();
        if (!classifier->load(path)) {
            loaded.erase(path);
            set_message(message, "the cascade could not be loaded");
            return nullptr;
        }
        slot = std::move(classifier);
    }
    return slot.get();
}

}  // namespace

extern "C" int easel_faces_abi(void) { return EASEL_FACES_ABI; }

extern "C" int easel_detect(const uint8_t *gray, int width, int height, size_t row_bytes, const char *cascade_path, int min_side,
                            int max_side, int equalize, double scale_step, int min_neighbors, easel_box *boxes, int max_boxes,
                            char *message) {
    try {
        cv::CascadeClassifier *slot = cascade(cascade_path, message);
        if (!slot) return -1;
        cv::Mat image(height, width, CV_8UC1, const_cast<uint8_t *>(gray), row_bytes);
        cv::Mat equalized;
        if (equalize) cv::equalizeHist(image, equalized);
        std::vector<cv::Rect> found;
        slot->detectMultiScale(equalize ? equalized : image, found, scale_step, min_neighbors, 0, cv::Size(min_side, min_side),
                               max_side > 0 ? cv::Size(max_side, max_side) : cv::Size());
        int count = static_cast<int>(found.size());
        for (int i = 0; i < count && i < max_boxes; i++) {
            boxes[i] = easel_box{found[i].x, found[i].y, found[i].width, found[i].height};
        }
        return count;
    } catch (const cv::Exception &error) {
        set_message(message, error.what());
        return -1;
    } catch (...) {
        set_message(message, "OpenCV failed");
        return -1;
    }
}

extern "C" int easel_thumbor_focus(const uint8_t *gray, int width, int height, size_t row_bytes, const char *cascade_path,
                                   easel_focal_point *points, int max_points, char *message) {
    try {
        cv::CascadeClassifier *slot = cascade(cascade_path, message);
        if (!slot) return -1;
        cv::Mat image(height, width, CV_8UC1, const_cast<uint8_t *>(gray), row_bytes);
        int min_side = std::max(20, std::min(width, height) / 15);
        std::vector<cv::Rect> faces;
        slot->detectMultiScale(image, faces, 1.2, 4, 0, cv::Size(min_side, min_side));
        int written = 0;
        if (!faces.empty()) {
            for (const auto &face : faces) {
                if (written >= max_points) break;
                double top = face.y - face.height * 0.12;
                if (top < 0) top = face.y;
                points[written++] = easel_focal_point{static_cast<double>(face.x + face.width / 2), top + face.height / 2,
                                                      static_cast<double>(face.width) * face.height, face.width, face.height, 1};
            }
            return written;
        }
        std::vector<cv::Point2f> corners;
        cv::goodFeaturesToTrack(image, corners, 20, 0.04, 1.0, cv::noArray(), 3, false);
        for (const auto &corner : corners) {
            if (written >= max_points) break;
            points[written++] = easel_focal_point{corner.x, corner.y, 1.0, 1, 1, 0};
        }
        return written;
    } catch (const cv::Exception &error) {
        set_message(message, error.what());
        return -1;
    } catch (...) {
        set_message(message, "OpenCV failed");
        return -1;
    }
}

extern "C" int easel_face_prepare(const uint8_t *pixels, int channels, int width, int height, size_t row_bytes, int out_width,
                                  int out_height, uint8_t *gray, size_t gray_row_bytes, int block, uint8_t *skin, int *coloured,
                                  char *message) {
    try {
        if ((channels != 1 && channels != 4) || width < 1 || height < 1 || out_width < 1 || out_height < 1 || block < 1) {
            set_message(message, "bad parameters");
            return -1;
        }
        cv::Mat source(height, width, channels == 4 ? CV_8UC4 : CV_8UC1, const_cast<uint8_t *>(pixels), row_bytes);
        cv::Mat resized;
        if (out_width == width && out_height == height) {
            resized = source;
        } else {
            int interpolation = out_width < width ? cv::INTER_AREA : cv::INTER_LINEAR;
            cv::resize(source, resized, cv::Size(out_width, out_height), 0, 0, interpolation);
        }
        cv::Mat target(out_height, out_width, CV_8UC1, gray, gray_row_bytes);
        if (channels == 4) cv::cvtColor(resized, target, cv::COLOR_RGBA2GRAY);
        else resized.copyTo(target);
        if (target.data != gray) {
            set_message(message, "the gray copy was not written in place");
            return -1;
        }
        if (channels != 4 || !skin || !coloured) return 0;
        int columns = (out_width + block - 1) / block, rows = (out_height + block - 1) / block, count = 0;
        for (int by = 0; by < rows; by++) {
            for (int bx = 0; bx < columns; bx++) {
                long r = 0, g = 0, b = 0, n = 0;
                for (int y = by * block; y < std::min(out_height, by * block + block); y++) {
                    const uint8_t *p = resized.ptr<uint8_t>(y) + (size_t)bx * block * 4;
                    for (int x = bx * block; x < std::min(out_width, bx * block + block); x++, p += 4) {
                        r += p[0]; g += p[1]; b += p[2]; n++;
                    }
                }
                double red = double(r) / n, green = double(g) / n, blue = double(b) / n;
                if (std::max({red, green, blue}) - std::min({red, green, blue}) > 24) count++;
                double luma = 0.299 * red + 0.587 * green + 0.114 * blue;
                double cb = 128 - 0.168736 * red - 0.331264 * green + 0.5 * blue;
                double cr = 128 + 0.5 * red - 0.418688 * green - 0.081312 * blue;
                skin[(size_t)by * columns + bx] = luma > 40 && cb >= 77 && cb <= 127 && cr >= 133 && cr <= 173;
            }
        }
        *coloured = count;
        return 0;
    } catch (const cv::Exception &error) {
        set_message(message, error.what());
        return -1;
    } catch (...) {
        set_message(message, "OpenCV failed");
        return -1;
    }
}
