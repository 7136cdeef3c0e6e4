#ifndef EASEL_VIDEO_H
#define EASEL_VIDEO_H

#include <stddef.h>
#include <stdint.h>

/* One frame of a video file held in memory, through FFmpeg (libavformat, libavcodec,
 * libswscale). Only MP4/MOV (and their 3GP/M4A/MJ2 kin) and Matroska/WebM containers are
 * opened, and only H.264, HEVC, VP8, VP9, AV1 (dav1d, else libaom), MPEG-4 part 2 and MJPEG
 * video is decoded; nothing is read but the bytes given (no file, network or nested resource
 * such as an MP4 data reference is ever opened).
 *
 * Every call is independent (open, work, close) and safe from any thread. Each returns 1 on
 * success; 0 with a message for a file that is damaged, truncated or not a video FFmpeg can
 * read; -1 with a message when one of the limits refuses it; -2 with a message when it holds
 * no video stream, or only video in a codec (or a container) that is not allowed; -3 when
 * limits->should_stop asked easel_video_frame to stop. */

#define EASEL_VIDEO_MESSAGE_SIZE 200

typedef struct {
    int max_streams;           /* refuse a file with more streams (of any kind) than this */
    int max_width, max_height; /* refuse a video stream larger than this; also, with a little
                                * room for padding, a bound on the frames any decoder will
                                * allocate (a header that understates the size does not help) */
    double max_duration;       /* seconds; refuse a longer file (0: no limit; an unknown
                                * duration passes, since the decoding bounds still hold) */
    int max_frames_decoded;    /* frames decoded for one easel_video_frame call (after its seek),
                                * e.g. 1000; packets read are bounded at twice this plus 100.
                                * Past either bound, the last frame decoded is the answer (the
                                * nearest before the time asked for), or -1 when none was */
    int64_t max_pixels;        /* the most pixels any decoder, stream analysis's included, may
                                * allocate for a frame, with room for its alignment (0:
                                * max_width x max_height); the probed size is the caller's to
                                * check against it */
    int (*should_stop)(void);  /* NULL, or asked before each packet easel_video_frame reads:
                                * nonzero stops it with -3 (the work is no longer wanted) */
} easel_video_limits;

typedef struct {
    int width, height;     /* the video stream's size in pixels, as decoded (cropped) */
    double pixel_aspect;   /* sample aspect ratio, a pixel's width over its height: 1 when
                            * square or unknown */
    double duration;       /* the file's, in seconds; -1 when unknown */
    int streams;           /* streams in the container, of every kind */
    int rotation;          /* degrees clockwise to turn the frame for display, from the
                            * stream's display matrix, to the nearest of 0/90/180/270 */
    char codec[32];        /* the codec, e.g. "h264", "hevc", "vp9", "av1" */
    char decoder[32];      /* the decoder that will be used, e.g. "h264", "libdav1d" */
    char container[32];    /* the demuxer, "mov,mp4,m4a,3gp,3g2,mj2" or "matroska,webm" */
} easel_video_info;

/* The container's and its video stream's facts (the first video stream that is not cover art
 * and has an allowed codec), without decoding a frame beyond what FFmpeg's stream analysis
 * needs (a bounded prefix of the file). */
int easel_video_probe(const uint8_t *data, size_t size, const easel_video_limits *limits, easel_video_info *info,
                      char *message);

/* Decodes the frame shown at `second` (counted from the stream's first timestamp): the first
 * frame whose presentation time is at or after `second`, reached by seeking back to the key
 * frame at or before it and decoding forward; when `second` is past the end, or the data stops
 * (a truncated file) after that key frame, the last frame decoded. With keyframe_only, that key
 * frame itself, decoding nothing after it. `threads` decoder threads (0 or 1: no thread is
 * created at all; at most 16).
 *
 * The frame is written as RGBA8 (alpha 255) at out_width x out_height (0 x 0: its own size; at
 * most four times it a side: an anamorphic frame is stretched to its display width this way),
 * scaled and converted in one swscale pass honouring the frame's colour
 * matrix (BT.601, BT.709, BT.2020, SMPTE 240M, FCC; when unlabelled, BT.709 from 1280 wide or
 * 720 high, else BT.601, and BT.601 for Motion JPEG) and range (limited or full), into pixels
 * (out_height rows of row_bytes, at least 4 x out_width). No tone mapping: HDR comes out as its code
 * values. width and height must be the size easel_video_probe reports; a stream whose frames
 * come out at another size is refused rather than written. *frame_time (may be NULL) gets the
 * frame's time in seconds on the same scale as `second` (-1 when it has none). Not rotated:
 * see easel_video_info.rotation. */
int easel_video_frame(const uint8_t *data, size_t size, const easel_video_limits *limits, double second, int keyframe_only,
                      int threads, uint8_t *pixels, size_t row_bytes, int width, int height, int out_width, int out_height,
                      double *frame_time, char *message);

#endif
