#ifndef EASEL_LAZY_H
#define EASEL_LAZY_H

#include <stddef.h>

/* Libraries loaded on first use (dlopen), not linked. A linked library is loaded, relocated and
 * initialised by every easel process at start, whether or not it reads a single SVG, PDF, HEIC
 * or face: librsvg, poppler and Pango with cairo and GLib, libheif and libavif with their AV1
 * and HEVC codecs, libjxl, libtiff with its compression libraries, libxml2. Loaded on first
 * use, they cost the first request that needs them instead (FFmpeg is loaded the same way by
 * CVideo).
 *
 * A shim lists the functions it calls in an X-macro of two parameters (X and a type it passes
 * on), and EASEL_LAZY_LIBRARY makes the struct of their addresses (members with the functions'
 * names and types) and the library that fills it; the shim calls through the struct:
 *
 *     #define SVG_FUNCTIONS(X, T) X(T, rsvg_handle_new_with_flags) X(T, rsvg_handle_set_dpi)
 *     EASEL_LAZY_LIBRARY(librsvg, svg, SVG_FUNCTIONS, NULL, "librsvg-2.so.2");
 *     ... if (!easel_lazy_require(&librsvg, message, size)) return EASEL_LAZY_UNAVAILABLE;
 *     ... svg.rsvg_handle_set_dpi(handle, 96); */

/* What a shim's entry point returns when its library could not be loaded (the reason in its
 * message): the server's trouble, not the image's. */
#define EASEL_LAZY_UNAVAILABLE (-9)

/* One function: its name and where its address goes in the struct. */
typedef struct {
    const char *name;
    size_t offset;
} easel_lazy_symbol;

#define EASEL_LAZY_MEMBER(type, function) __typeof__(&function) function;
#define EASEL_LAZY_ENTRY(type, function) {#function, offsetof(type, function)},

/* A set of libraries loaded once: the sonames, the functions and the struct they fill. */
typedef struct {
    const char *const *sonames; /* the first that has a name is used for it */
    size_t soname_count;
    const easel_lazy_symbol *symbols;
    size_t symbol_count;
    void *functions;
    /* Run once after the functions are found (may be NULL): 1, or 0 with why in `problem` (a
     * library of another version than the headers easel was built with). */
    int (*verify)(char *problem, size_t size);
    int state;          /* 0 not tried, 1 loaded, -1 failed (written once, under the loader's lock) */
    char problem[200];  /* why it failed */
} easel_lazy_library;

/* Loads `library` on the first call (every soname with RTLD_NOW | RTLD_LOCAL, kept for the
 * process's life) and fills its struct; later calls answer from the first. Returns 1 when every
 * function was found, else 0, with the reason (the library that did not load, the function it
 * lacks) in library->problem. Safe from any thread. */
int easel_lazy_load(easel_lazy_library *library);

/* easel_lazy_load, and on failure the reason copied into `message` (message_size bytes; none
 * when message is NULL): what a shim's entry point checks first. */
int easel_lazy_require(easel_lazy_library *library, char *message, size_t message_size);

/* The struct `api` of FUNCTIONS' addresses and the library `library` that fills it from the
 * sonames given last, checked by `verify` (or NULL) once loaded. */
#define EASEL_LAZY_LIBRARY(library, api, FUNCTIONS, verify_function, ...)                                              \
    static struct {                                                                                                    \
        FUNCTIONS(EASEL_LAZY_MEMBER, _)                                                                                \
    } api;                                                                                                             \
    static const easel_lazy_symbol library##_symbols[] = {FUNCTIONS(EASEL_LAZY_ENTRY, __typeof__(api))};              \
    static const char *const library##_sonames[] = {__VA_ARGS__};                                                      \
    static easel_lazy_library library = {                                                                              \
        .sonames = library##_sonames,                                                                                  \
        .soname_count = sizeof library##_sonames / sizeof library##_sonames[0],                                       \
        .symbols = library##_symbols,                                                                                  \
        .symbol_count = sizeof library##_symbols / sizeof library##_symbols[0],                                       \
        .functions = &api,                                                                                             \
        .verify = verify_function}

/* Runs `hook` after every library set is first loaded (outside the loader's lock), from now on:
 * one hook a process (GLib's log routing: librsvg, poppler, Pango and FFmpeg all bring GLib). */
void easel_lazy_after_load(void (*hook)(void));

/* For a loader of its own (CVideo's FFmpeg): runs the hook after it has loaded its libraries. */
void easel_lazy_loaded_elsewhere(void);

#endif
