#ifndef EASEL_LIBXML2_H
#define EASEL_LIBXML2_H

/* libxml2, for the SVG budget check (easel_svg_budget.c) and SVG output (easel_svg_sanitize.c),
 * is loaded on first use (easel_lazy.h), not linked: with it come ICU's common library and
 * liblzma, which every process would load, relocate and initialise at start (most of a
 * megabyte of resident memory) whether or not it reads an SVG. The two files call libxml2
 * through `easel_xml`, after easel_xml_require. */

#include <libxml/SAX2.h>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/xmlreader.h>
#include <stddef.h>

#include "easel_lazy.h"

/* xmlFree is a variable (libxml2's allocator hooks, built without per-thread ones): its
 * member holds the variable's address, and xml_free calls through it. */
#define EASEL_XML_FUNCTIONS(X, T)                                                                                   \
    X(T, xmlCtxtGetLastError) X(T, xmlCtxtReadMemory) X(T, xmlDocDumpMemoryEnc) X(T, xmlDocGetRootElement)        \
    X(T, xmlFree) X(T, xmlFreeDoc) X(T, xmlFreeNode) X(T, xmlFreeParserCtxt) X(T, xmlFreeTextReader)               \
    X(T, xmlInitParser) X(T, xmlNewNs) X(T, xmlNewParserCtxt) X(T, xmlNewText) X(T, xmlNodeGetContent)             \
    X(T, xmlNodeListGetString) X(T, xmlReaderForMemory) X(T, xmlRemoveProp) X(T, xmlReplaceNode)                   \
    X(T, xmlSAX2EntityDecl) X(T, xmlSetExternalEntityLoader) X(T, xmlSetNs) X(T, xmlStopParser)                    \
    X(T, xmlTextReaderConstLocalName) X(T, xmlTextReaderConstValue) X(T, xmlTextReaderDepth)                       \
    X(T, xmlTextReaderGetAttribute) X(T, xmlTextReaderIsEmptyElement) X(T, xmlTextReaderNodeType)                  \
    X(T, xmlTextReaderRead) X(T, xmlUnlinkNode)

typedef struct {
    EASEL_XML_FUNCTIONS(EASEL_LAZY_MEMBER, _)
} easel_xml_api;

/* The functions, filled by easel_xml_require's first success. */
extern easel_xml_api easel_xml;

/* Loads libxml2 on the first call: 1, or 0 with why in `message` (message_size bytes). */
int easel_xml_require(char *message, size_t message_size);

static inline void xml_free(void *pointer) { (*easel_xml.xmlFree)(pointer); }

#endif
