#include "easel_video.h"

#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/display.h>
#include <libavutil/imgutils.h>
#include <libavutil/pixdesc.h>
#include <libswscale/swscale.h>

#include <dlfcn.h>

#include "easel_lazy.h"

/* FFmpeg is loaded on first use (dlopen), not linked: libavformat alone brings some 130 shared
 * libraries (network protocols, disc, tracker and subtitle formats), whose loading and
 * relocation every easel process (each CLI command, each test helper) would otherwise pay at
 * start, video or not. The libraries are the major versions these headers are of. Failing to
 * load makes every call answer -2 (no video support) with the reason. */
#define SONAME(name, major) "lib" name ".so." AV_STRINGIFY(major)
static __typeof__(&av_calloc) p_av_calloc;
static __typeof__(&av_dict_free) p_av_dict_free;
static __typeof__(&av_dict_get) p_av_dict_get;
static __typeof__(&av_dict_set) p_av_dict_set;
static __typeof__(&av_dict_set_int) p_av_dict_set_int;
static __typeof__(&av_display_rotation_get) p_av_display_rotation_get;
static __typeof__(&av_frame_alloc) p_av_frame_alloc;
static __typeof__(&av_frame_free) p_av_frame_free;
static __typeof__(&av_frame_move_ref) p_av_frame_move_ref;
static __typeof__(&av_frame_unref) p_av_frame_unref;
static __typeof__(&av_free) p_av_free;
static __typeof__(&av_freep) p_av_freep;
static __typeof__(&av_get_pix_fmt_name) p_av_get_pix_fmt_name;
static __typeof__(&av_guess_sample_aspect_ratio) p_av_guess_sample_aspect_ratio;
static __typeof__(&av_image_alloc) p_av_image_alloc;
static __typeof__(&av_log_set_level) p_av_log_set_level;
static __typeof__(&av_malloc) p_av_malloc;
static __typeof__(&av_packet_alloc) p_av_packet_alloc;
static __typeof__(&av_packet_free) p_av_packet_free;
static __typeof__(&av_packet_unref) p_av_packet_unref;
static __typeof__(&av_pix_fmt_desc_get) p_av_pix_fmt_desc_get;
static __typeof__(&av_probe_input_buffer2) p_av_probe_input_buffer2;
static __typeof__(&av_read_frame) p_av_read_frame;
static __typeof__(&av_seek_frame) p_av_seek_frame;
static __typeof__(&av_stream_get_side_data) p_av_stream_get_side_data;
static __typeof__(&av_strerror) p_av_strerror;
static __typeof__(&avcodec_alloc_context3) p_avcodec_alloc_context3;
static __typeof__(&avcodec_find_decoder_by_name) p_avcodec_find_decoder_by_name;
static __typeof__(&avcodec_free_context) p_avcodec_free_context;
static __typeof__(&avcodec_get_name) p_avcodec_get_name;
static __typeof__(&avcodec_open2) p_avcodec_open2;
static __typeof__(&avcodec_parameters_to_context) p_avcodec_parameters_to_context;
static __typeof__(&avcodec_receive_frame) p_avcodec_receive_frame;
static __typeof__(&avcodec_send_packet) p_avcodec_send_packet;
static __typeof__(&avformat_alloc_context) p_avformat_alloc_context;
static __typeof__(&avformat_close_input) p_avformat_close_input;
static __typeof__(&avformat_find_stream_info) p_avformat_find_stream_info;
static __typeof__(&avformat_open_input) p_avformat_open_input;
static __typeof__(&avio_alloc_context) p_avio_alloc_context;
static __typeof__(&avio_context_free) p_avio_context_free;
static __typeof__(&sws_freeContext) p_sws_freeContext;
static __typeof__(&sws_getCoefficients) p_sws_getCoefficients;
static __typeof__(&sws_getContext) p_sws_getContext;
static __typeof__(&sws_scale) p_sws_scale;
static __typeof__(&sws_setColorspaceDetails) p_sws_setColorspaceDetails;
static int ffmpeg_loaded;
static char ffmpeg_problem[160];

static void *lookup(void *const handles[4], const char *name) {
    for (int i = 0; i < 4; i++) {
        void *symbol = handles[i] ? dlsym(handles[i], name) : NULL;
        if (symbol) return symbol;
    }
    return NULL;
}

static void missing_symbol(const char *name) {
    snprintf(ffmpeg_problem, sizeof ffmpeg_problem, "this FFmpeg has no %s", name);
}

static void load_ffmpeg(void) {
    const char *names[4] = {SONAME("avutil", LIBAVUTIL_VERSION_MAJOR), SONAME("swscale", LIBSWSCALE_VERSION_MAJOR),
                            SONAME("avcodec", LIBAVCODEC_VERSION_MAJOR), SONAME("avformat", LIBAVFORMAT_VERSION_MAJOR)};
    void *handles[4] = {NULL};
    for (int i = 0; i < 4; i++) {
        /* (Kept loaded for the process's life: never dlclosed.) */
        handles[i] = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (!handles[i]) {
            const char *why = dlerror();
            snprintf(ffmpeg_problem, sizeof ffmpeg_problem, "FFmpeg could not be loaded (%s)", why ? why : names[i]);
            return;
        }
    }
    if (!(*(void **)&p_av_calloc = lookup(handles, "av_calloc"))) { missing_symbol("av_calloc"); return; }
    if (!(*(void **)&p_av_dict_free = lookup(handles, "av_dict_free"))) { missing_symbol("av_dict_free"); return; }
    if (!(*(void **)&p_av_dict_get = lookup(handles, "av_dict_get"))) { missing_symbol("av_dict_get"); return; }
    if (!(*(void **)&p_av_dict_set = lookup(handles, "av_dict_set"))) { missing_symbol("av_dict_set"); return; }
    if (!(*(void **)&p_av_dict_set_int = lookup(handles, "av_dict_set_int"))) { missing_symbol("av_dict_set_int"); return; }
    if (!(*(void **)&p_av_display_rotation_get = lookup(handles, "av_display_rotation_get"))) { missing_symbol("av_display_rotation_get"); return; }
    if (!(*(void **)&p_av_frame_alloc = lookup(handles, "av_frame_alloc"))) { missing_symbol("av_frame_alloc"); return; }
    if (!(*(void **)&p_av_frame_free = lookup(handles, "av_frame_free"))) { missing_symbol("av_frame_free"); return; }
    if (!(*(void **)&p_av_frame_move_ref = lookup(handles, "av_frame_move_ref"))) { missing_symbol("av_frame_move_ref"); return; }
    if (!(*(void **)&p_av_frame_unref = lookup(handles, "av_frame_unref"))) { missing_symbol("av_frame_unref"); return; }
    if (!(*(void **)&p_av_free = lookup(handles, "av_free"))) { missing_symbol("av_free"); return; }
    if (!(*(void **)&p_av_freep = lookup(handles, "av_freep"))) { missing_symbol("av_freep"); return; }
    if (!(*(void **)&p_av_get_pix_fmt_name = lookup(handles, "av_get_pix_fmt_name"))) { missing_symbol("av_get_pix_fmt_name"); return; }
    if (!(*(void **)&p_av_guess_sample_aspect_ratio = lookup(handles, "av_guess_sample_aspect_ratio"))) { missing_symbol("av_guess_sample_aspect_ratio"); return; }
    if (!(*(void **)&p_av_image_alloc = lookup(handles, "av_image_alloc"))) { missing_symbol("av_image_alloc"); return; }
    if (!(*(void **)&p_av_log_set_level = lookup(handles, "av_log_set_level"))) { missing_symbol("av_log_set_level"); return; }
    if (!(*(void **)&p_av_malloc = lookup(handles, "av_malloc"))) { missing_symbol("av_malloc"); return; }
    if (!(*(void **)&p_av_packet_alloc = lookup(handles, "av_packet_alloc"))) { missing_symbol("av_packet_alloc"); return; }
    if (!(*(void **)&p_av_packet_free = lookup(handles, "av_packet_free"))) { missing_symbol("av_packet_free"); return; }
    if (!(*(void **)&p_av_packet_unref = lookup(handles, "av_packet_unref"))) { missing_symbol("av_packet_unref"); return; }
    if (!(*(void **)&p_av_pix_fmt_desc_get = lookup(handles, "av_pix_fmt_desc_get"))) { missing_symbol("av_pix_fmt_desc_get"); return; }
    if (!(*(void **)&p_av_probe_input_buffer2 = lookup(handles, "av_probe_input_buffer2"))) { missing_symbol("av_probe_input_buffer2"); return; }
    if (!(*(void **)&p_av_read_frame = lookup(handles, "av_read_frame"))) { missing_symbol("av_read_frame"); return; }
    if (!(*(void **)&p_av_seek_frame = lookup(handles, "av_seek_frame"))) { missing_symbol("av_seek_frame"); return; }
    if (!(*(void **)&p_av_stream_get_side_data = lookup(handles, "av_stream_get_side_data"))) { missing_symbol("av_stream_get_side_data"); return; }
    if (!(*(void **)&p_av_strerror = lookup(handles, "av_strerror"))) { missing_symbol("av_strerror"); return; }
    if (!(*(void **)&p_avcodec_alloc_context3 = lookup(handles, "avcodec_alloc_context3"))) { missing_symbol("avcodec_alloc_context3"); return; }
    if (!(*(void **)&p_avcodec_find_decoder_by_name = lookup(handles, "avcodec_find_decoder_by_name"))) { missing_symbol("avcodec_find_decoder_by_name"); return; }
    if (!(*(void **)&p_avcodec_free_context = lookup(handles, "avcodec_free_context"))) { missing_symbol("avcodec_free_context"); return; }
    if (!(*(void **)&p_avcodec_get_name = lookup(handles, "avcodec_get_name"))) { missing_symbol("avcodec_get_name"); return; }
    if (!(*(void **)&p_avcodec_open2 = lookup(handles, "avcodec_open2"))) { missing_symbol("avcodec_open2"); return; }
    if (!(*(void **)&p_avcodec_parameters_to_context = lookup(handles, "avcodec_parameters_to_context"))) { missing_symbol("avcodec_parameters_to_context"); return; }
    if (!(*(void **)&p_avcodec_receive_frame = lookup(handles, "avcodec_receive_frame"))) { missing_symbol("avcodec_receive_frame"); return; }
    if (!(*(void **)&p_avcodec_send_packet = lookup(handles, "avcodec_send_packet"))) { missing_symbol("avcodec_send_packet"); return; }
    if (!(*(void **)&p_avformat_alloc_context = lookup(handles, "avformat_alloc_context"))) { missing_symbol("avformat_alloc_context"); return; }
    if (!(*(void **)&p_avformat_close_input = lookup(handles, "avformat_close_input"))) { missing_symbol("avformat_close_input"); return; }
    if (!(*(void **)&p_avformat_find_stream_info = lookup(handles, "avformat_find_stream_info"))) { missing_symbol("avformat_find_stream_info"); return; }
    if (!(*(void **)&p_avformat_open_input = lookup(handles, "avformat_open_input"))) { missing_symbol("avformat_open_input"); return; }
    if (!(*(void **)&p_avio_alloc_context = lookup(handles, "avio_alloc_context"))) { missing_symbol("avio_alloc_context"); return; }
    if (!(*(void **)&p_avio_context_free = lookup(handles, "avio_context_free"))) { missing_symbol("avio_context_free"); return; }
    if (!(*(void **)&p_sws_freeContext = lookup(handles, "sws_freeContext"))) { missing_symbol("sws_freeContext"); return; }
    if (!(*(void **)&p_sws_getCoefficients = lookup(handles, "sws_getCoefficients"))) { missing_symbol("sws_getCoefficients"); return; }
    if (!(*(void **)&p_sws_getContext = lookup(handles, "sws_getContext"))) { missing_symbol("sws_getContext"); return; }
    if (!(*(void **)&p_sws_scale = lookup(handles, "sws_scale"))) { missing_symbol("sws_scale"); return; }
    if (!(*(void **)&p_sws_setColorspaceDetails = lookup(handles, "sws_setColorspaceDetails"))) { missing_symbol("sws_setColorspaceDetails"); return; }
    /* FFmpeg logs to stderr by default; hostile files would fill a server's log with its
     * complaints. What matters reaches the caller as a message instead. */
    p_av_log_set_level(AV_LOG_QUIET);
    ffmpeg_loaded = 1;
    easel_lazy_loaded_elsewhere(); /* (Debian's libavcodec brings GLib, by librsvg) */
}

#define av_calloc p_av_calloc
#define av_dict_free p_av_dict_free
#define av_dict_get p_av_dict_get
#define av_dict_set p_av_dict_set
#define av_dict_set_int p_av_dict_set_int
#define av_display_rotation_get p_av_display_rotation_get
#define av_frame_alloc p_av_frame_alloc
#define av_frame_free p_av_frame_free
#define av_frame_move_ref p_av_frame_move_ref
#define av_frame_unref p_av_frame_unref
#define av_free p_av_free
#define av_freep p_av_freep
#define av_get_pix_fmt_name p_av_get_pix_fmt_name
#define av_guess_sample_aspect_ratio p_av_guess_sample_aspect_ratio
#define av_image_alloc p_av_image_alloc
#define av_log_set_level p_av_log_set_level
#define av_malloc p_av_malloc
#define av_packet_alloc p_av_packet_alloc
#define av_packet_free p_av_packet_free
#define av_packet_unref p_av_packet_unref
#define av_pix_fmt_desc_get p_av_pix_fmt_desc_get
#define av_probe_input_buffer2 p_av_probe_input_buffer2
#define av_read_frame p_av_read_frame
#define av_seek_frame p_av_seek_frame
#define av_stream_get_side_data p_av_stream_get_side_data
#define av_strerror p_av_strerror
#define avcodec_alloc_context3 p_avcodec_alloc_context3
#define avcodec_find_decoder_by_name p_avcodec_find_decoder_by_name
#define avcodec_free_context p_avcodec_free_context
#define avcodec_get_name p_avcodec_get_name
#define avcodec_open2 p_avcodec_open2
#define avcodec_parameters_to_context p_avcodec_parameters_to_context
#define avcodec_receive_frame p_avcodec_receive_frame
#define avcodec_send_packet p_avcodec_send_packet
#define avformat_alloc_context p_avformat_alloc_context
#define avformat_close_input p_avformat_close_input
#define avformat_find_stream_info p_avformat_find_stream_info
#define avformat_open_input p_avformat_open_input
#define avio_alloc_context p_avio_alloc_context
#define avio_context_free p_avio_context_free
#define sws_freeContext p_sws_freeContext
#define sws_getCoefficients p_sws_getCoefficients
#define sws_getContext p_sws_getContext
#define sws_scale p_sws_scale
#define sws_setColorspaceDetails p_sws_setColorspaceDetails

/* The demuxers allowed, by FFmpeg's names for them. Checked twice: against the format our own
 * probe finds (exact names, so the refusal can say what the file is), and by libavformat itself
 * through format_whitelist, in case a later FFmpeg switches demuxer between probe and open. */
#define MOV_DEMUXER "mov,mp4,m4a,3gp,3g2,mj2"
#define MATROSKA_DEMUXER "matroska,webm"
static const char format_whitelist[] = MOV_DEMUXER "," MATROSKA_DEMUXER;

/* The decoders allowed, by name rather than by avcodec_find_decoder, so that a hardware wrapper
 * (cuvid, qsv, v4l2m2m) or a second software decoder for the same codec (libvpx) is never picked
 * by registration order. AV1: FFmpeg 5.1's native "av1" decoder only drives hardware, so dav1d,
 * or libaom where a build lacks dav1d. */
static const struct {
    enum AVCodecID id;
    const char *decoders[2];
} allowed_codecs[] = {
    {AV_CODEC_ID_H264, {"h264", NULL}},
    {AV_CODEC_ID_HEVC, {"hevc", NULL}},
    {AV_CODEC_ID_VP8, {"vp8", NULL}},
    {AV_CODEC_ID_VP9, {"vp9", NULL}},
    {AV_CODEC_ID_AV1, {"libdav1d", "libaom-av1"}},
    {AV_CODEC_ID_MPEG4, {"mpeg4", NULL}},
    {AV_CODEC_ID_MJPEG, {"mjpeg", NULL}},
};

/* The same decoders as one list, for libavformat (which opens decoders of its own for every
 * stream, audio included, while analysing them) and for our own decoder context. */
static const char codec_whitelist[] = "h264,hevc,vp8,vp9,libdav1d,libaom-av1,mpeg4,mjpeg";

#define IO_BUFFER_SIZE 32768
/* How much the container probe may read (libavformat's own default and ceiling). */
#define FORMAT_PROBE_SIZE (1 << 20)
/* How much stream analysis may read, in bytes and in stream time (microseconds). */
#define ANALYZE_BYTES "5000000"
#define ANALYZE_MICROSECONDS "5000000"
#define MAX_THREADS 16

static pthread_once_t load_once = PTHREAD_ONCE_INIT;

static void set_message(char *message, const char *what, int error) {
    char reason[AV_ERROR_MAX_STRING_SIZE] = "";
    if (error) av_strerror(error, reason, sizeof reason);
    snprintf(message, EASEL_VIDEO_MESSAGE_SIZE, "%s%s%s", what, error ? ": " : "", reason);
}

typedef struct {
    const uint8_t *data;
    size_t size;
    size_t position;
} memory_source;

static int read_memory(void *opaque, uint8_t *buffer, int buffer_size) {
    memory_source *source = opaque;
    if (buffer_size <= 0) return AVERROR(EINVAL);
    if (source->position >= source->size) return AVERROR_EOF;
    size_t count = source->size - source->position;
    if (count > (size_t)buffer_size) count = (size_t)buffer_size;
    memcpy(buffer, source->data + source->position, count);
    source->position += count;
    return (int)count;
}

/* Positions past the end are refused rather than clamped, so that a demuxer told "no" can take
 * its own error path; the end itself is a valid position (reading there gives EOF). */
static int64_t seek_memory(void *opaque, int64_t offset, int whence) {
    memory_source *source = opaque;
    int64_t base;
    switch (whence & ~AVSEEK_FORCE) {
    case AVSEEK_SIZE: return (int64_t)source->size;
    case SEEK_SET: base = 0; break;
    case SEEK_CUR: base = (int64_t)source->position; break;
    case SEEK_END: base = (int64_t)source->size; break;
    default: return AVERROR(EINVAL);
    }
    if (offset > INT64_MAX - base) return AVERROR(EINVAL);
    int64_t target = base + offset;
    if (target < 0 || (uint64_t)target > source->size) return AVERROR(EINVAL);
    source->position = (size_t)target;
    return target;
}

/* Any demuxer's attempt to open another resource (an MP4 data reference, a playlist entry)
 * fails: the bytes given are all there is. */
static int refuse_io_open(AVFormatContext *format, AVIOContext **io, const char *url, int flags, AVDictionary **options) {
    (void)format, (void)url, (void)flags, (void)options;
    *io = NULL;
    return AVERROR(EPERM);
}

typedef struct {
    memory_source source;
    AVIOContext *io;
    AVFormatContext *format;
    AVStream *stream;        /* the video stream used */
    const AVCodec *decoder;  /* its allowed decoder */
} session;

static void close_session(session *s) {
    /* (Nothing was opened without FFmpeg, and its functions are not there to call.) */
    if (!ffmpeg_loaded) return;
    /* With AVFMT_FLAG_CUSTOM_IO this leaves s->io alone; it is ours to free, and its buffer may
     * no longer be the one we gave it (probing swaps in a bigger one). */
    avformat_close_input(&s->format);
    if (s->io) {
        av_freep(&s->io->buffer);
        avio_context_free(&s->io);
    }
}

/* 1 and the decoder, -2 for a codec not on the list, -3 for an allowed one this FFmpeg lacks. */
static int allowed_decoder(enum AVCodecID id, const AVCodec **decoder) {
    for (size_t i = 0; i < sizeof allowed_codecs / sizeof allowed_codecs[0]; i++) {
        if (allowed_codecs[i].id != id) continue;
        for (size_t j = 0; j < 2 && allowed_codecs[i].decoders[j]; j++) {
            *decoder = avcodec_find_decoder_by_name(allowed_codecs[i].decoders[j]);
            if (*decoder) return 1;
        }
        return -3;
    }
    return -2;
}

/* An option FFmpeg did not take would be a protection silently missing (a later FFmpeg renaming
 * one), so what is left over in the dictionary after an open refuses the file. */
static int all_options_taken(AVDictionary *options, char *message) {
    const AVDictionaryEntry *left = av_dict_get(options, "", NULL, AV_DICT_IGNORE_SUFFIX);
    if (!left) return 1;
    snprintf(message, EASEL_VIDEO_MESSAGE_SIZE, "this FFmpeg does not know the option %s", left->key);
    return 0;
}

/* The decoders' max_pixels. They check it against what they allocate (the width rounded up to
 * their stride alignment, or whole macroblocks), not against the picture, so a frame exactly
 * at the limits needs room over width x height; the exact size is checked on every frame. */
static int64_t pixel_bound(const easel_video_limits *limits) {
    int64_t bound = ((int64_t)limits->max_width + 128) * ((int64_t)limits->max_height + 128);
    /* A pixel limit below the sides' product: the frame's own pixels, with the same room for
     * alignment (a row of 128 more and 128 more rows at the longest side allowed). */
    if (limits->max_pixels > 0) {
        int64_t longest = limits->max_width > limits->max_height ? limits->max_width : limits->max_height;
        int64_t room = limits->max_pixels + 256 * longest + 128 * 128;
        if (room < bound) bound = room;
    }
    return bound < INT_MAX ? bound : INT_MAX;
}

/* Opens the container, analyses its streams and picks the video stream, checking every limit.
 * The session must be closed whatever this returns. */
static int open_session(session *s, const uint8_t *data, size_t size, const easel_video_limits *limits, char *message) {
    memset(s, 0, sizeof *s);
    pthread_once(&load_once, load_ffmpeg);
    if (!ffmpeg_loaded) {
        snprintf(message, EASEL_VIDEO_MESSAGE_SIZE, "%s", ffmpeg_problem);
        return -2;
    }
    if (!limits || limits->max_streams < 1 || limits->max_width < 1 || limits->max_height < 1 || limits->max_frames_decoded < 1 ||
        !(limits->max_duration >= 0)) {
        set_message(message, "the video limits are missing or not positive", 0);
        return 0;
    }
    if (!data || size == 0) {
        set_message(message, "the file is empty", 0);
        return 0;
    }
    if ((uint64_t)size > INT64_MAX) {
        set_message(message, "the file is too large", 0);
        return 0;
    }
    s->source = (memory_source){data, size, 0};
    uint8_t *buffer = av_malloc(IO_BUFFER_SIZE);
    if (!buffer) {
        set_message(message, "out of memory", 0);
        return 0;
    }
    s->io = avio_alloc_context(buffer, IO_BUFFER_SIZE, 0, &s->source, read_memory, NULL, seek_memory);
    if (!s->io) {
        av_free(buffer);
        set_message(message, "out of memory", 0);
        return 0;
    }
    s->format = avformat_alloc_context();
    if (!s->format) {
        set_message(message, "out of memory", 0);
        return 0;
    }
    s->format->pb = s->io;
    s->format->flags |= AVFMT_FLAG_CUSTOM_IO;
    s->format->io_open = refuse_io_open;

    const AVInputFormat *input = NULL;
    int error = av_probe_input_buffer2(s->io, &input, NULL, s->format, 0, FORMAT_PROBE_SIZE);
    if (error < 0 || !input) {
        set_message(message, "not a video file FFmpeg recognises", error < 0 ? error : 0);
        return 0;
    }
    if (strcmp(input->name, MOV_DEMUXER) != 0 && strcmp(input->name, MATROSKA_DEMUXER) != 0) {
        snprintf(message, EASEL_VIDEO_MESSAGE_SIZE, "the container is %s, not MP4/MOV or Matroska/WebM", input->name);
        return -2;
    }

    /* max_streams one over the limit: a file one over it still opens and is refused below with
     * a count in the message; one further over fails inside the demuxer before it allocates
     * all its streams. The empty protocol whitelist matches no protocol, a second lock behind
     * refuse_io_open. */
    AVDictionary *options = NULL;
    av_dict_set(&options, "probesize", ANALYZE_BYTES, 0);
    av_dict_set(&options, "analyzeduration", ANALYZE_MICROSECONDS, 0);
    av_dict_set(&options, "format_whitelist", format_whitelist, 0);
    av_dict_set(&options, "codec_whitelist", codec_whitelist, 0);
    av_dict_set(&options, "protocol_whitelist", "", 0);
    av_dict_set_int(&options, "max_streams", limits->max_streams < INT_MAX ? limits->max_streams + 1 : INT_MAX, 0);
    error = avformat_open_input(&s->format, NULL, input, &options);
    int taken = error < 0 || all_options_taken(options, message);
    av_dict_free(&options);
    if (error < 0) {
        /* avformat_open_input has freed the context (not our I/O context). The demuxers
         * report the max_streams cap as ENOMEM (avformat_new_stream failing); on an input this
         * small that is the cap far more often than memory really running out. */
        if (error == AVERROR(ENOMEM)) {
            snprintf(message, EASEL_VIDEO_MESSAGE_SIZE, "the file has more than %d streams, or FFmpeg ran out of memory opening it",
                     limits->max_streams);
            return -1;
        }
        set_message(message, "FFmpeg could not read the container", error);
        return 0;
    }
    if (!taken) return 0;
    if (s->format->nb_streams > (unsigned)limits->max_streams) {
        snprintf(message, EASEL_VIDEO_MESSAGE_SIZE, "the file has %u streams (the limit is %d)", s->format->nb_streams,
                 limits->max_streams);
        return -1;
    }

    /* Stream analysis decodes the first frames of every stream with libavformat's own decoder
     * contexts: bound their frame size now, before a header that understates it can matter
     * (the decoders refuse a larger frame before allocating it), and keep them single-threaded. */
    int64_t max_pixels = pixel_bound(limits);
    unsigned count = s->format->nb_streams;
    AVDictionary **stream_options = count ? av_calloc(count, sizeof *stream_options) : NULL;
    if (count && !stream_options) {
        set_message(message, "out of memory", 0);
        return 0;
    }
    for (unsigned i = 0; i < count; i++) {
        av_dict_set_int(&stream_options[i], "max_pixels", max_pixels, 0);
        av_dict_set(&stream_options[i], "threads", "1", 0);
    }
    error = avformat_find_stream_info(s->format, stream_options);
    for (unsigned i = 0; i < count; i++) av_dict_free(&stream_options[i]);
    av_freep(&stream_options);
    if (error < 0) {
        set_message(message, "FFmpeg could not analyse the streams", error);
        return 0;
    }
    if (s->format->nb_streams > (unsigned)limits->max_streams) {
        snprintf(message, EASEL_VIDEO_MESSAGE_SIZE, "the file has %u streams (the limit is %d)", s->format->nb_streams,
                 limits->max_streams);
        return -1;
    }

    /* The first video stream with an allowed codec, cover art (an attached picture) aside. */
    const AVStream *refused = NULL;
    int refusal = -2;
    for (unsigned i = 0; i < s->format->nb_streams && !s->stream; i++) {
        AVStream *stream = s->format->streams[i];
        if (stream->codecpar->codec_type != AVMEDIA_TYPE_VIDEO || (stream->disposition & AV_DISPOSITION_ATTACHED_PIC)) continue;
        int allowed = allowed_decoder(stream->codecpar->codec_id, &s->decoder);
        if (allowed == 1) s->stream = stream;
        else if (!refused) refused = stream, refusal = allowed;
    }
    if (!s->stream) {
        if (!refused) set_message(message, "the file has no video stream", 0);
        else
            snprintf(message, EASEL_VIDEO_MESSAGE_SIZE,
                     refusal == -3 ? "this FFmpeg has no decoder for the %s video" : "the video is %s, which is not allowed",
                     avcodec_get_name(refused->codecpar->codec_id));
        return -2;
    }

    const AVCodecParameters *parameters = s->stream->codecpar;
    if (parameters->width <= 0 || parameters->height <= 0) {
        set_message(message, "the video stream has no size", 0);
        return 0;
    }
    if (parameters->width > limits->max_width || parameters->height > limits->max_height) {
        snprintf(message, EASEL_VIDEO_MESSAGE_SIZE, "the video is %dx%d (the limit is %dx%d)", parameters->width,
                 parameters->height, limits->max_width, limits->max_height);
        return -1;
    }
    /* (max_pixels is the caller's to check against the size reported; here it bounds what the
     * decoders allocate.) */
    if (s->stream->time_base.num <= 0 || s->stream->time_base.den <= 0) {
        set_message(message, "the video stream has no time base", 0);
        return 0;
    }
    double duration = s->format->duration > 0 ? s->format->duration / (double)AV_TIME_BASE : -1;
    if (limits->max_duration > 0 && duration > limits->max_duration) {
        snprintf(message, EASEL_VIDEO_MESSAGE_SIZE, "the video lasts %.1f s (the limit is %.1f s)", duration,
                 limits->max_duration);
        return -1;
    }
    return 1;
}

/* Degrees clockwise, to the nearest quarter turn. av_display_rotation_get measures
 * anticlockwise; the matrix comes from the file and may be degenerate (NaN) or anything. */
static int rotation(const AVStream *stream) {
    size_t size = 0;
    const uint8_t *matrix = av_stream_get_side_data(stream, AV_PKT_DATA_DISPLAYMATRIX, &size);
    if (!matrix || size < 9 * sizeof(int32_t)) return 0;
    double clockwise = -av_display_rotation_get((const int32_t *)matrix);
    if (!(clockwise >= -1e6 && clockwise <= 1e6)) return 0;
    long quarters = (long)(clockwise >= 0 ? clockwise / 90 + 0.5 : clockwise / 90 - 0.5);
    return (int)(((quarters % 4) + 4) % 4) * 90;
}

int easel_video_probe(const uint8_t *data, size_t size, const easel_video_limits *limits, easel_video_info *info,
                      char *message) {
    session s;
    int result = open_session(&s, data, size, limits, message);
    if (result == 1) {
        const AVCodecParameters *parameters = s.stream->codecpar;
        memset(info, 0, sizeof *info);
        info->width = parameters->width;
        info->height = parameters->height;
        AVRational aspect = av_guess_sample_aspect_ratio(s.format, s.stream, NULL);
        info->pixel_aspect = aspect.num > 0 && aspect.den > 0 ? av_q2d(aspect) : 1;
        info->duration = s.format->duration > 0 ? s.format->duration / (double)AV_TIME_BASE : -1;
        info->streams = (int)s.format->nb_streams;
        info->rotation = rotation(s.stream);
        snprintf(info->codec, sizeof info->codec, "%s", avcodec_get_name(parameters->codec_id));
        snprintf(info->decoder, sizeof info->decoder, "%s", s.decoder->name);
        snprintf(info->container, sizeof info->container, "%s", s.format->iformat->name);
    }
    close_session(&s);
    return result;
}

/* The swscale matrix for a frame. Unlabelled video follows the usual players' guess: BT.709 for
 * HD, BT.601 below it, and BT.601 always for Motion JPEG (JFIF's). */
static int colour_matrix(const AVFrame *frame, enum AVCodecID codec) {
    switch (frame->colorspace) {
    case AVCOL_SPC_BT709: return SWS_CS_ITU709;
    case AVCOL_SPC_FCC: return SWS_CS_FCC;
    case AVCOL_SPC_BT470BG:
    case AVCOL_SPC_SMPTE170M: return SWS_CS_ITU601;
    case AVCOL_SPC_SMPTE240M: return SWS_CS_SMPTE240M;
    case AVCOL_SPC_BT2020_NCL:
    case AVCOL_SPC_BT2020_CL: return SWS_CS_BT2020;
    default: return codec != AV_CODEC_ID_MJPEG && (frame->width >= 1280 || frame->height >= 720) ? SWS_CS_ITU709 : SWS_CS_ITU601;
    }
}

/* The frame as RGBA into the caller's rows. swscale writes into a buffer of its own first:
 * its SIMD paths may write past the last pixel of a row or of the image, and the caller's
 * rows need be no larger than the pixels. ACCURATE_RND also keeps it off the fast
 * yuv420p-to-RGB path, which rounds the width up to 8 pixels; FULL_CHR_H_INT interpolates
 * chroma instead of repeating it. */
static int convert(const AVFrame *frame, enum AVCodecID codec, uint8_t *pixels, size_t row_bytes, int out_width, int out_height,
                   char *message) {
    enum AVPixelFormat format = frame->format;
    int full_range = frame->color_range == AVCOL_RANGE_JPEG;
    /* The deprecated "J" formats are their plain twins at full range. */
    switch (format) {
    case AV_PIX_FMT_YUVJ420P: format = AV_PIX_FMT_YUV420P, full_range = 1; break;
    case AV_PIX_FMT_YUVJ422P: format = AV_PIX_FMT_YUV422P, full_range = 1; break;
    case AV_PIX_FMT_YUVJ444P: format = AV_PIX_FMT_YUV444P, full_range = 1; break;
    case AV_PIX_FMT_YUVJ440P: format = AV_PIX_FMT_YUV440P, full_range = 1; break;
    case AV_PIX_FMT_YUVJ411P: format = AV_PIX_FMT_YUV411P, full_range = 1; break;
    default: break;
    }
    const AVPixFmtDescriptor *descriptor = av_pix_fmt_desc_get(format);
    if (!descriptor || (descriptor->flags & AV_PIX_FMT_FLAG_HWACCEL)) {
        set_message(message, "the decoder produced frames in no pixel format swscale reads", 0);
        return 0;
    }
    int width = frame->width, height = frame->height;
    /* At the size asked for, in the same pass as the conversion: bicubic when it shrinks (its
     * filter widened to the ratio), bilinear (exact at 1:1) otherwise. */
    int scales = out_width != width || out_height != height;
    struct SwsContext *scaler = sws_getContext(width, height, format, out_width, out_height, AV_PIX_FMT_RGBA,
                                               (scales ? SWS_BICUBIC : SWS_BILINEAR) | SWS_ACCURATE_RND | SWS_FULL_CHR_H_INT,
                                               NULL, NULL, NULL);
    if (!scaler) {
        snprintf(message, EASEL_VIDEO_MESSAGE_SIZE, "swscale cannot convert %s frames", av_get_pix_fmt_name(format));
        return 0;
    }
    /* RGB output is full range whatever the flag says; the source's range and matrix are what
     * count (without this call swscale assumes BT.601 at limited range for every YUV frame). */
    if (!(descriptor->flags & AV_PIX_FMT_FLAG_RGB) &&
        sws_setColorspaceDetails(scaler, sws_getCoefficients(colour_matrix(frame, codec)), full_range,
                                 sws_getCoefficients(SWS_CS_DEFAULT), 1, 0, 1 << 16, 1 << 16) < 0) {
        sws_freeContext(scaler);
        snprintf(message, EASEL_VIDEO_MESSAGE_SIZE, "swscale refused the colour settings for %s", av_get_pix_fmt_name(format));
        return 0;
    }
    uint8_t *rgba[4] = {NULL};
    int linesize[4] = {0};
    if (av_image_alloc(rgba, linesize, out_width, out_height, AV_PIX_FMT_RGBA, 64) < 0) {
        sws_freeContext(scaler);
        set_message(message, "out of memory", 0);
        return 0;
    }
    int rows = sws_scale(scaler, (const uint8_t *const *)frame->data, frame->linesize, 0, height, rgba, linesize);
    sws_freeContext(scaler);
    if (rows != out_height) {
        av_freep(&rgba[0]);
        set_message(message, "swscale could not convert the frame", rows < 0 ? rows : 0);
        return 0;
    }
    /* A source with alpha would carry it through; the contract is opaque pixels. */
    int opaque = !(descriptor->flags & AV_PIX_FMT_FLAG_ALPHA);
    for (int y = 0; y < out_height; y++) {
        uint8_t *row = pixels + (size_t)y * row_bytes;
        memcpy(row, rgba[0] + (size_t)y * linesize[0], (size_t)out_width * 4);
        if (!opaque)
            for (int x = 0; x < out_width; x++) row[4 * x + 3] = 255;
    }
    av_freep(&rgba[0]);
    return 1;
}

/* a + b, held inside +-2^62 so that hostile start times and far-off requests cannot overflow. */
static int64_t add_clamped(int64_t a, int64_t b) {
    const int64_t bound = INT64_C(1) << 62;
    if (a > bound) a = bound;
    if (a < -bound) a = -bound;
    if (b > bound) b = bound;
    if (b < -bound) b = -bound;
    return a + b;
}

int easel_video_frame(const uint8_t *data, size_t size, const easel_video_limits *limits, double second, int keyframe_only,
                      int threads, uint8_t *pixels, size_t row_bytes, int width, int height, int out_width, int out_height,
                      double *frame_time, char *message) {
    session s;
    AVDictionary *options = NULL;
    AVCodecContext *decoder = NULL;
    AVPacket *packet = NULL;
    AVFrame *frame = NULL, *kept = NULL;
    /* The caller's mistakes first, before any parsing. */
    if (!(second >= 0 && second <= 1e12)) {
        set_message(message, "the time asked for is not a number of seconds from 0", 0);
        return 0;
    }
    if (out_width == 0 && out_height == 0) out_width = width, out_height = height;
    if (!pixels || width < 1 || height < 1 || out_width < 1 || out_height < 1 || (int64_t)out_width > 4 * (int64_t)width || (int64_t)out_height > 4 * (int64_t)height ||
        row_bytes < (size_t)out_width * 4) {
        set_message(message, "the pixel rows are missing or too short for the frame", 0);
        return 0;
    }
    int result = open_session(&s, data, size, limits, message);
    /* Without FFmpeg there is nothing to free (and no function to free it with). */
    if (result != 1 && !ffmpeg_loaded) return result;
    if (result != 1) goto cleanup;
    result = 0;

    const AVCodecParameters *parameters = s.stream->codecpar;
    if (width != parameters->width || height != parameters->height) {
        snprintf(message, EASEL_VIDEO_MESSAGE_SIZE, "asked for %dx%d but the video is %dx%d", width, height, parameters->width,
                 parameters->height);
        goto cleanup;
    }

    /* Only the chosen stream's packets come out of the demuxer. */
    for (unsigned i = 0; i < s.format->nb_streams; i++)
        if (s.format->streams[i] != s.stream) s.format->streams[i]->discard = AVDISCARD_ALL;

    decoder = avcodec_alloc_context3(s.decoder);
    packet = av_packet_alloc();
    frame = av_frame_alloc();
    kept = av_frame_alloc();
    if (!decoder || !packet || !frame || !kept) {
        set_message(message, "out of memory", 0);
        goto cleanup;
    }
    int error = avcodec_parameters_to_context(decoder, parameters);
    if (error < 0) {
        set_message(message, "FFmpeg could not set up the decoder", error);
        goto cleanup;
    }
    decoder->pkt_timebase = s.stream->time_base;
    /* One thread means none created: FFmpeg's default count (1) with no frame or slice workers;
     * dav1d and libaom take the same count. */
    if (threads < 1) threads = 1;
    if (threads > MAX_THREADS) threads = MAX_THREADS;
    av_dict_set_int(&options, "threads", threads, 0);
    av_dict_set_int(&options, "max_pixels", pixel_bound(limits), 0);
    av_dict_set(&options, "codec_whitelist", codec_whitelist, 0);
    error = avcodec_open2(decoder, s.decoder, &options);
    if (error < 0) {
        set_message(message, "FFmpeg could not open the decoder", error);
        goto cleanup;
    }
    if (!all_options_taken(options, message)) goto cleanup;

    /* Time 0 is the stream's first timestamp. The seek goes back to the key frame at or before
     * the target; with nothing to skip (time 0) the packets analysis already read are used as
     * they are. A failed seek tries the start, and failing that decodes from wherever the
     * demuxer is: the frame and packet bounds hold either way. */
    AVRational time_base = s.stream->time_base;
    int64_t start = s.stream->start_time != AV_NOPTS_VALUE ? s.stream->start_time : 0;
    double ticks = second * time_base.den / time_base.num;
    int64_t target = add_clamped(start, ticks < 0x1p61 ? (int64_t)(ticks + 0.5) : INT64_C(1) << 61);
    if (target > start && av_seek_frame(s.format, s.stream->index, target, AVSEEK_FLAG_BACKWARD) < 0)
        av_seek_frame(s.format, s.stream->index, start, AVSEEK_FLAG_BACKWARD);

    long long max_packets = 2LL * limits->max_frames_decoded + 100, packets = 0;
    int frames = 0, flushed = 0, pending = 0, found = 0, gave_up = 0, last_error = 0;
    /* After the flush each turn takes a frame, an error or the end from the decoder; bound
     * those turns too, so that a decoder stuck on errors cannot keep us here. */
    long long drain_turns = 0, max_drain_turns = 2LL * limits->max_frames_decoded + 100;
    while (!found) {
        if (limits->should_stop && limits->should_stop()) {
            set_message(message, "cancelled: the frame is no longer wanted", 0);
            result = -3;
            goto cleanup;
        }
        if (!pending && !flushed) {
            error = av_read_frame(s.format, packet);
            if (error < 0) {
                /* The end, or data that stops making sense (a truncated file): decode what the
                 * decoder still holds and keep the last frame. */
                if (error != AVERROR_EOF) last_error = error;
                flushed = 1;
                avcodec_send_packet(decoder, NULL);
            } else if (packet->stream_index != s.stream->index) {
                av_packet_unref(packet);
                if (++packets > max_packets) gave_up = 1;
                if (gave_up) break;
                continue;
            } else {
                pending = 1;
                if (++packets > max_packets) gave_up = 1;
                if (gave_up) break;
            }
        }
        if (pending) {
            error = avcodec_send_packet(decoder, packet);
            /* EAGAIN: the decoder wants its frames taken first; the packet waits for the next turn. */
            if (error != AVERROR(EAGAIN)) {
                av_packet_unref(packet);
                pending = 0;
                if (error < 0) last_error = error;
            }
        }
        int finished = 0;
        for (;;) {
            if (flushed && ++drain_turns > max_drain_turns) {
                finished = 1;
                break;
            }
            error = avcodec_receive_frame(decoder, frame);
            if (error == AVERROR(EAGAIN)) {
                finished = flushed;
                break;
            }
            if (error == AVERROR_EOF) {
                finished = 1;
                break;
            }
            if (error < 0) {
                /* A damaged frame: go on to the next packet. */
                last_error = error;
                if (!flushed) break;
                continue;
            }
            if (frame->width != width || frame->height != height) {
                snprintf(message, EASEL_VIDEO_MESSAGE_SIZE, "the video changes size (%dx%d, then %dx%d)", width, height,
                         frame->width, frame->height);
                goto cleanup;
            }
            frames++;
            av_frame_unref(kept);
            av_frame_move_ref(kept, frame);
            int64_t time = kept->best_effort_timestamp;
            if (keyframe_only || time == AV_NOPTS_VALUE || time >= target) {
                found = 1;
                break;
            }
            if (frames >= limits->max_frames_decoded) {
                gave_up = 1;
                break;
            }
        }
        if (finished || found || gave_up) break;
    }
    /* Past the bounds, the frame decoded last (the nearest before the time asked for) is the
     * answer: the same one every time for the same file and time. */
    if (gave_up && !frames) {
        snprintf(message, EASEL_VIDEO_MESSAGE_SIZE, "gave up after %d frames and %lld packets short of %.3f s (the limit is %d frames)",
                 frames, packets, second, limits->max_frames_decoded);
        result = -1;
        goto cleanup;
    }
    if (!frames) {
        set_message(message, "no frame could be decoded", last_error);
        goto cleanup;
    }
    result = convert(kept, parameters->codec_id, pixels, row_bytes, out_width, out_height, message);
    if (result == 1 && frame_time) {
        int64_t time = kept->best_effort_timestamp;
        *frame_time = time == AV_NOPTS_VALUE ? -1 : (double)add_clamped(time, -start) * time_base.num / time_base.den;
    }

cleanup:
    av_dict_free(&options);
    av_frame_free(&kept);
    av_frame_free(&frame);
    av_packet_free(&packet);
    avcodec_free_context(&decoder);
    close_session(&s);
    return result;
}
