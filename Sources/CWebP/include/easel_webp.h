#ifndef EASEL_WEBP_H
#define EASEL_WEBP_H
/* libwebp reports errors as return values, so Swift calls it directly; this target only
 * exposes its headers and links it. */
#include <webp/decode.h>
#include <webp/demux.h>
#include <webp/encode.h>
#endif
