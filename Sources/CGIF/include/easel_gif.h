#ifndef EASEL_GIF_H
#define EASEL_GIF_H

#include <stddef.h>
#include <stdint.h>

#define EASEL_GIF_MESSAGE_SIZE 200

/* Logical screen size and frame count hint, from the header alone. */
int easel_gif_read_header(const uint8_t *data, size_t size, int *width, int *height, char *message);

/* Counts frames without decoding them (their compressed data is skipped), stopping at
 * `stop_at`. Returns the count, or -1 with a message when the file is damaged before that.
 * `first_interlaced` and `first_pixels` (each may be NULL) are set from the first frame's
 * descriptor: 1 when its rows are interlaced, and its rectangle's pixels (0 without a frame). */
int easel_gif_count_frames(const uint8_t *data, size_t size, int stop_at, int *first_interlaced, long *first_pixels,
                           char *message);

/* Decodes the first frame, composed onto a transparent canvas of the logical screen size,
 * as RGBA (straight alpha) into `pixels` (height rows of row_bytes). A frame larger than
 * max_frame_pixels is refused (the canvas limit alone would not bound the work). */
int easel_gif_decode_first_frame(const uint8_t *data, size_t size, uint8_t *pixels, size_t row_bytes,
                                 int width, int height, long max_frame_pixels, char *message);

/* The first frame as easel_gif_decode_first_frame composes it, shrunk on load by `factor` (2, 4
 * or 8): each `factor × factor` block of the canvas (the last ones partial) becomes its mean,
 * colour weighed by alpha (easel_shrink.h), into `pixels` (ceil(height / factor) rows of
 * row_bytes, RGBA, straight alpha). The canvas never exists: a frame's rows are summed as they
 * are read, an interlaced frame's from its palette indexes (a byte a pixel) once its four passes
 * are read, and a mapped file's pages are handed back as they go by. */
int easel_gif_decode_first_frame_shrunk(const uint8_t *data, size_t size, uint8_t *pixels, size_t row_bytes,
                                        int width, int height, int factor, long max_frame_pixels, char *message);

/* Every frame of an animation, in order, each composed on the canvas as browsers do (GIF89a
 * disposal: keep, clear to transparent, or restore what was there). Reads one frame at a time:
 * memory stays one canvas (plus one saved copy for "restore previous") and one line. */
typedef struct easel_gif_reader easel_gif_reader;

/* NULL with a message when the file does not open; *loop_count from a NETSCAPE2.0 extension
 * is filled as frames are read (0: forever; -1: no loop extension seen, play once). */
easel_gif_reader *easel_gif_reader_open(const uint8_t *data, size_t size, int width, int height, char *message);

/* Composes the next frame onto `canvas` (height rows of row_bytes, RGBA; the caller keeps it
 * between calls and starts it transparent). 1: a frame, with its delay in ms (as written:
 * browsers show delays under 20 ms as 100 ms); 2: no more frames; 0: error; a frame larger
 * than max_frame_pixels is an error; -1 when the frames' areas so far add up past
 * max_total_pixels (checked before the frame is decoded). */
int easel_gif_reader_next(easel_gif_reader *reader, uint8_t *canvas, size_t row_bytes, long max_frame_pixels,
                          long max_total_pixels, int *delay_ms, int *loop_count, char *message);

void easel_gif_reader_close(easel_gif_reader *reader);

/* For tests: frames at their own rectangles (lefts, tops, widths, heights; indexes of frame f
 * start at frame_offsets[f]), each with a disposal method (0-3) and a transparent index (-1:
 * none), on a width x height screen. */
int easel_gif_encode_frames(int width, int height, int frame_count, const uint8_t *indexes, const size_t *frame_offsets,
                            const int *lefts, const int *tops, const int *widths, const int *heights, const int *disposals,
                            const int *transparent, const uint8_t *colors, int color_count, const int *delays_cs,
                            uint8_t **output, size_t *output_size, char *message);

/* For tests: an animated GIF of `frame_count` frames of width x height palette indexes, with
 * a global palette (`colors` RGB triples) and a delay in centiseconds per frame; loops forever.
 * *output is malloc'ed (free with free()). */
int easel_gif_encode_indexed(const uint8_t *indexes, int width, int height, int frame_count, const uint8_t *colors,
                             int color_count, const int *delays_cs, uint8_t **output, size_t *output_size, char *message);

/* Writes a GIF one frame at a time, each full-screen with its own palette (up to 256 RGB
 * triples) and, when transparent >= 0, that index transparent: what Easel serves to clients
 * that take GIF. loop_count: GIF's repeats after the first play, 0 forever (a NETSCAPE2.0
 * extension, written when animated). */
typedef struct easel_gif_writer easel_gif_writer;

easel_gif_writer *easel_gif_writer_new(int width, int height, int loop_count, int animated, char *message);

/* Adds a frame of width x height palette indexes (giflib masks them in place); disposal 1
 * (keep) or 2 (clear after showing: full-size frames, so the previous one never shows through
 * the next one's transparent pixels). */
int easel_gif_writer_add(easel_gif_writer *writer, uint8_t *indexes, const uint8_t *palette, int palette_size, int transparent,
                         int delay_cs, int disposal, char *message);

/* The file (*output is malloc'ed: free with free()); the writer is freed either way. */
int easel_gif_writer_finish(easel_gif_writer *writer, uint8_t **output, size_t *output_size, char *message);

/* Frees a writer that will not be finished. */
void easel_gif_writer_free(easel_gif_writer *writer);

#endif
