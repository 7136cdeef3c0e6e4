#include "easel_libxml2.h"

easel_xml_api easel_xml;

/* Once, under the loader's lock, before any caller uses the table: libxml2 2.9's xmlInitParser
 * is not reentrant, and the budget check and the sanitiser run on several threads at once. */
static int initialise(char *problem, size_t size) {
    (void)problem;
    (void)size;
    easel_xml.xmlInitParser();
    return 1;
}

static const easel_lazy_symbol xml_symbols[] = {EASEL_XML_FUNCTIONS(EASEL_LAZY_ENTRY, easel_xml_api)};
static const char *const xml_sonames[] = {"libxml2.so.2"};
static easel_lazy_library libxml2 = {
    .sonames = xml_sonames,
    .soname_count = 1,
    .symbols = xml_symbols,
    .symbol_count = sizeof xml_symbols / sizeof xml_symbols[0],
    .functions = &easel_xml,
    .verify = initialise,
};

int easel_xml_require(char *message, size_t message_size) { return easel_lazy_require(&libxml2, message, message_size); }
