#include "easel_libxml2.h"

easel_xml_api easel_xml;

static const easel_lazy_symbol xml_symbols[] = {EASEL_XML_FUNCTIONS(EASEL_LAZY_ENTRY, easel_xml_api)};
static const char *const xml_sonames[] = {"libxml2.so.2"};
static easel_lazy_library libxml2 = {
    .sonames = xml_sonames,
    .soname_count = 1,
    .symbols = xml_symbols,
    .symbol_count = sizeof xml_symbols / sizeof xml_symbols[0],
    .functions = &easel_xml,
    .verify = NULL,
};

int easel_xml_require(char *message, size_t message_size) { return easel_lazy_require(&libxml2, message, message_size); }
