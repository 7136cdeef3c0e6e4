/* libxml2 (libxml2-dev), for the SVG sanitiser in CSVG: its include path comes from pkg-config
 * (libxml-2.0: -I/usr/include/libxml2, no other flags). */
#include <libxml/parser.h>
#include <libxml/tree.h>
