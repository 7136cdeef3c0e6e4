#ifndef EASEL_INPUT_H
#define EASEL_INPUT_H

#include <stddef.h>
#include <stdint.h>

/* Input files read through a read-only mapping instead of into memory, for decoders that read
 * forward: the pages a decoder has read past are handed back to the kernel as it goes
 * (easel_input_release), so a file of hundreds of megabytes costs the pages being decoded, not
 * the file. A page read again is read again from the file.
 *
 * A file that shrinks while it is mapped would end the process with SIGBUS on the next read past
 * its new end. Instead, a SIGBUS handler (installed with the first mapping, passing every other
 * SIGBUS on to the handler that was there before) maps zeros over the rest of the mapping, the
 * decoder reads zeros, and easel_input_changed says so: the caller answers "the file changed
 * while it was read" rather than whatever the decoder made of the zeros. */

/* Maps the regular file at `path` (at most `max_size` bytes; 0 bytes is refused, as is anything
 * that is not a regular file) and registers the mapping. Returns its start with `*size` set, or
 * NULL with `*error_number`: an errno value, EFBIG past `max_size`; or one that says to read the
 * file instead: ENOSPC when every one of the 256 registration slots is taken or no descriptor is
 * left to keep the file open with while it is mapped, EINVAL for an empty file or one that is not
 * a regular file, ENODEV when the file system cannot map it. */
const uint8_t *easel_input_map(const char *path, size_t max_size, size_t *size, int *error_number);
/* As easel_input_map, for a file already open as `fd` (read; the caller keeps and closes it). */
const uint8_t *easel_input_map_descriptor(int fd, size_t max_size, size_t *size, int *error_number);

/* Unregisters and unmaps a mapping from easel_input_map. */
void easel_input_unmap(const uint8_t *start, size_t size);

/* 1 when the mapping that holds `position` was cut short by its file shrinking while it was
 * read (what was read past the new end was zeros), or when the file's size or modification
 * time is no longer what it was when it was mapped (written in place); 0 otherwise, and for
 * memory that is no mapped input. (The file is kept open while it is mapped, so a file
 * replaced by another under its name, renamed, unlinked or given other permissions is not a
 * change: the mapping is the old file's, as it was.) */
int easel_input_changed(const void *position);

/* 1 when `position` is inside a mapped input from easel_input_map. */
int easel_input_is_mapped(const void *position);

/* The bytes of the mapped input that holds `position`, before it, are not needed again (a
 * reader that reads forward, as libjpeg's and libspng's do, and libtiff's for strips and tiles
 * stored in order): their whole pages are returned to the kernel once the position has moved 1
 * MiB since the last time. A position behind what was returned is a new pass (another
 * decode, a reader that jumped back): the hand-back starts again from the start. Does nothing
 * for memory that is no mapped input, so a decoder calls it on any buffer. */
void easel_input_release(const void *position);

/* As easel_input_release, for a reader that also reads again behind its position (libwebp's
 * incremental decoder rereads a VP8 image's first partition and its alpha chunk): everything
 * before the position is handed back each time, the pages read again included. (It walks the
 * mapping from its start each time: a reader's cost grows with the square of the file's size,
 * which libwebp's limit of 16383 pixels a side bounds.) */
void easel_input_release_behind(const void *position);
/* Hands back every page of the mapped input that holds `position` (a caller that read its header
 * and will not read more before a decode reads it again from the start). Nothing for memory
 * that is no mapped input. */
void easel_input_release_all(const void *position);

#endif
