#include "easel_svg.h"
#include "easel_libxml2.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* SVG output: the source document rebuilt from libxml2's tree with only what draws. Kept:
 * elements in the SVG namespace (or, in a document without one, elements without one) other
 * than those that run code or embed other documents; attributes without a namespace and
 * xlink's and xml's (not xml:base). Removed: scripts, event handlers, foreign objects and
 * whatever is not SVG, comments and processing instructions, the DTD (its internal entities
 * expanded first, within libxml2's amplification limits; no external entity, DTD or file is
 * ever loaded), every reference that is not to the document itself or to a raster `data:`
 * image (`href`, CSS `url()`, `@import`), and animations that would set a link or a handler. */

static const char *svg_namespace = "http://www.w3.org/2000/svg";
static const char *xlink_namespace = "http://www.w3.org/1999/xlink";
static const char *xml_namespace = "http://www.w3.org/XML/1998/namespace";

/* libxml2 asks this for every external entity, DTD and XInclude: nothing is ever loaded. (It is
 * process-wide: librsvg's parses, which load nothing either, get it too.) A second guard: the
 * declaration of an external entity already stops the parse (below). */
static xmlParserInputPtr refuse_external(const char *url, const char *id, xmlParserCtxtPtr context) {
    (void)url;
    (void)id;
    (void)context;
    return NULL;
}

/* The DTD's entity declarations: an external one (general or parameter) stops the parse and
 * refuses the document, whether it is used or not (libxml2 would leave some failed loads
 * silently empty and refuse others); internal ones are declared as usual. */
static void declare_entity(void *context, const xmlChar *name, int type, const xmlChar *public_id, const xmlChar *system_id,
                           xmlChar *content) {
    xmlParserCtxtPtr parser = context;
    if (public_id || system_id) {
        *(int *)parser->_private = 1;
        easel_xml.xmlStopParser(parser);
        return;
    }
    easel_xml.xmlSAX2EntityDecl(context, name, type, public_id, system_id, content);
}

static pthread_once_t loader_once = PTHREAD_ONCE_INIT;
static void install_loader(void) {
    easel_xml.xmlSetExternalEntityLoader(refuse_external);
}

typedef struct {
    int elements;
    int max_elements;
    int svg_without_namespace;
    char *message;
} walk;

static int ascii_lower(int c) { return c >= 'A' && c <= 'Z' ? c + 32 : c; }

static int equals_ignoring_case(const char *a, const char *b) {
    for (; *a && *b; a++, b++) {
        if (ascii_lower((unsigned char)*a) != ascii_lower((unsigned char)*b)) return 0;
    }
    return *a == *b;
}

/* Whether `text` starts with `prefix` (lowercase ASCII), ignoring case. */
static int starts_with(const char *text, const char *prefix) {
    for (; *prefix; text++, prefix++) {
        if (ascii_lower((unsigned char)*text) != *prefix) return 0;
    }
    return 1;
}

/* Skips ASCII whitespace and control characters (URL parsers drop or trim them). */
static const char *skip_blank(const char *text) {
    while (*text && (unsigned char)*text <= ' ') text++;
    return text;
}

/* A reference to the document itself (`#id`) or a raster image in a `data:` URL. Tabs and line
 * breaks inside the scheme are ignored as URL parsers ignore them. */
static int local_or_raster(const char *value) {
    char scheme[32];
    size_t n = 0;
    value = skip_blank(value);
    if (*value == '#') return 1;
    for (; *value && n + 1 < sizeof scheme; value++) {
        unsigned char c = (unsigned char)*value;
        if (c == '\t' || c == '\n' || c == '\r') continue;
        scheme[n++] = (char)ascii_lower(c);
        if (c == ';' || c == ',') break;
    }
    scheme[n] = 0;
    static const char *allowed[] = {"data:image/png", "data:image/jpeg", "data:image/jpg", "data:image/gif", "data:image/webp",
                                    "data:image/avif"};
    for (size_t i = 0; i < sizeof allowed / sizeof allowed[0]; i++) {
        size_t length = strlen(allowed[i]);
        if (strncmp(scheme, allowed[i], length) == 0 && (scheme[length] == ';' || scheme[length] == ',')) return 1;
    }
    return 0;
}

/* Whether CSS (a style sheet, a style attribute, a presentation attribute) could load anything:
 * `@import`, a `url()` to anything but the document or a raster data: image, the other functions
 * that take URLs, or any escape (an escape can spell `url` or `@import`). */
static int css_loads(const char *text) {
    if (strchr(text, '\\')) return 1;
    for (const char *p = text; *p; p++) {
        if (*p == '@' && starts_with(p + 1, "import")) return 1;
        if (*p != '(') continue;
        const char *start = p;
        while (start > text) {
            unsigned char c = (unsigned char)start[-1];
            if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_') start--;
            else break;
        }
        size_t length = (size_t)(p - start);
        char name[24];
        if (length == 0 || length >= sizeof name) continue;
        for (size_t i = 0; i < length; i++) name[i] = (char)ascii_lower((unsigned char)start[i]);
        name[length] = 0;
        if (strcmp(name, "url") == 0) {
            const char *target = skip_blank(p + 1);
            if (*target == '"' || *target == '\'') target = skip_blank(target + 1);
            if (!local_or_raster(target)) return 1;
        } else if (strcmp(name, "src") == 0 || strcmp(name, "image") == 0 || strcmp(name, "image-set") == 0 ||
                   strcmp(name, "-webkit-image-set") == 0 || strcmp(name, "cross-fade") == 0 || strcmp(name, "element") == 0) {
            return 1;
        }
    }
    return 0;
}

/* A value that starts (after blanks) with a script or document scheme. */
static int scripted(const char *value) {
    char start[16];
    size_t n = 0;
    for (value = skip_blank(value); *value && n + 1 < sizeof start; value++) {
        unsigned char c = (unsigned char)*value;
        if (c == '\t' || c == '\n' || c == '\r') continue;
        start[n++] = (char)ascii_lower(c);
    }
    start[n] = 0;
    return starts_with(start, "javascript:") || starts_with(start, "vbscript:") || starts_with(start, "data:");
}

static void drop(xmlNodePtr node) {
    easel_xml.xmlUnlinkNode(node);
    easel_xml.xmlFreeNode(node);
}

static int is_svg(walk *state, xmlNodePtr node) {
    if (!node->ns) return state->svg_without_namespace;
    return node->ns->href && strcmp((const char *)node->ns->href, svg_namespace) == 0;
}

static int any_entry(const char *value, int (*check)(const char *));

/* Whether an attribute stays: see the file's comment. */
static int keep_attribute(xmlAttrPtr attribute) {
    const char *name = (const char *)attribute->name;
    const char *space = attribute->ns && attribute->ns->href ? (const char *)attribute->ns->href : NULL;
    if (space && strcmp(space, xlink_namespace) != 0 && strcmp(space, xml_namespace) != 0) return 0;
    if (space && strcmp(space, xml_namespace) == 0 && strcmp(name, "base") == 0) return 0;
    if (starts_with(name, "on")) return 0;
    xmlChar *value = easel_xml.xmlNodeListGetString(attribute->doc, attribute->children, 1);
    const char *text = value ? (const char *)value : "";
    int keep;
    if (equals_ignoring_case(name, "href") || equals_ignoring_case(name, "src")) keep = local_or_raster(text);
    else keep = !scripted(text) && !css_loads(text) && !any_entry(text, scripted);
    if (value) xml_free(value);
    return keep;
}

/* An animation that sets a link, a handler or a style (SMIL `set`/`animate…` of `href`, `on…`,
 * `src`, `style`), or whose target is not a plain `attributeName` (a namespaced one is a decoy
 * beside the real one, in any case of the name). */
static int animates_code(xmlNodePtr node) {
    const char *name = (const char *)node->name;
    if (!equals_ignoring_case(name, "set") && !starts_with(name, "animate")) return 0;
    int code = 0;
    for (xmlAttrPtr attribute = node->properties; attribute && !code; attribute = attribute->next) {
        if (!equals_ignoring_case((const char *)attribute->name, "attributeName")) continue;
        if (attribute->ns) {
            code = 1;
            break;
        }
        xmlChar *target = easel_xml.xmlNodeListGetString(node->doc, attribute->children, 1);
        const char *text = skip_blank(target ? (const char *)target : "");
        const char *colon = strchr(text, ':');
        const char *local = colon ? colon + 1 : text;
        code = starts_with(local, "href") || starts_with(local, "on") || starts_with(local, "src") || starts_with(local, "style") ||
               starts_with(local, "xlink") || starts_with(local, "xml:base") || starts_with(local, "base");
        if (target) xml_free(target);
    }
    return code;
}

/* Each `;`-separated entry of an animation value list (`values`, `to`, `from`, `by`) is checked
 * like a whole value. */
static int any_entry(const char *value, int (*check)(const char *)) {
    char entry[512];
    while (*value) {
        size_t n = 0;
        while (*value && *value != ';') {
            if (n + 1 < sizeof entry) entry[n++] = *value;
            value++;
        }
        entry[n] = 0;
        if (check(entry)) return 1;
        if (*value == ';') value++;
    }
    return 0;
}

static int keep_element(walk *state, xmlNodePtr node) {
    if (!is_svg(state, node)) return 0;
    static const char *refused[] = {"script", "foreignObject", "handler", "listener", "iframe", "embed", "object", "audio", "video"};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        if (equals_ignoring_case((const char *)node->name, refused[i])) return 0;
    }
    if (animates_code(node)) return 0;
    if (equals_ignoring_case((const char *)node->name, "style")) {
        /* A style sheet is its text: any other child goes first (removed later, it could have
         * split a `url(` or an `@import` the check below would then not see), then the text as
         * it will be written is checked. */
        xmlNodePtr child = node->children;
        while (child) {
            xmlNodePtr next = child->next;
            if (child->type != XML_TEXT_NODE && child->type != XML_CDATA_SECTION_NODE) drop(child);
            child = next;
        }
        xmlChar *sheet = easel_xml.xmlNodeGetContent(node);
        int loads = sheet && css_loads((const char *)sheet);
        if (sheet) xml_free(sheet);
        if (loads) return 0;
    }
    return 1;
}

static void clean_attributes(xmlNodePtr node) {
    xmlAttrPtr attribute = node->properties;
    while (attribute) {
        xmlAttrPtr next = attribute->next;
        if (!keep_attribute(attribute)) easel_xml.xmlRemoveProp(attribute);
        attribute = next;
    }
}

/* Whether a text or CDATA node holds `<script` or `javascript:` (in any case). */
static int holds_script(xmlNodePtr node) {
    const char *text = (const char *)node->content;
    if (!text) return 0;
    for (const char *p = text; *p; p++) {
        if ((*p == '<' && starts_with(p + 1, "script")) || starts_with(p, "javascript:")) return 1;
    }
    return 0;
}

/* The element's children, cleaned (libxml2 refuses nesting past 256 levels, so the recursion is
 * bounded). 0 with a message past the element limit. */
static int clean_children(walk *state, xmlNodePtr parent) {
    xmlNodePtr child = parent->children;
    while (child) {
        xmlNodePtr next = child->next;
        switch (child->type) {
        case XML_ELEMENT_NODE:
            if (++state->elements > state->max_elements) {
                snprintf(state->message, EASEL_SVG_MESSAGE_SIZE, "more than %d elements (the limit)", state->max_elements);
                return 0;
            }
            if (!keep_element(state, child)) {
                drop(child);
                break;
            }
            clean_attributes(child);
            if (!clean_children(state, child)) return 0;
            break;
        case XML_TEXT_NODE:
        case XML_CDATA_SECTION_NODE:
            /* Text that spells a script goes (a page that pastes the answer into HTML must not
             * find one); CDATA becomes plain text, whose `<` is written as `&lt;`, so no text can
             * turn into markup when the answer is read as anything else than XML. */
            if (holds_script(child)) {
                drop(child);
            } else if (child->type == XML_CDATA_SECTION_NODE) {
                xmlNodePtr text = easel_xml.xmlNewText(child->content);
                if (text) {
                    easel_xml.xmlReplaceNode(child, text);
                    easel_xml.xmlFreeNode(child);
                } else {
                    drop(child);
                }
            }
            break;
        default: /* comments, processing instructions, entity references, XInclude markers */
            drop(child);
        }
        child = next;
    }
    return 1;
}

int easel_svg_sanitize(const uint8_t *data, size_t size, int max_elements, size_t max_output, uint8_t **output, size_t *output_size,
                       char *message) {
    *output = NULL;
    *output_size = 0;
    message[0] = 0;
    if (!easel_xml_require(message, EASEL_SVG_MESSAGE_SIZE)) return EASEL_LAZY_UNAVAILABLE;
    if (size > (size_t)0x7fffffff) {
        snprintf(message, EASEL_SVG_MESSAGE_SIZE, "the document is too large");
        return 0;
    }
    pthread_once(&loader_once, install_loader);
    xmlParserCtxtPtr context = easel_xml.xmlNewParserCtxt();
    if (!context) {
        snprintf(message, EASEL_SVG_MESSAGE_SIZE, "out of memory");
        return 0;
    }
    /* Internal entities expanded (libxml2 refuses amplification); nothing from the network;
     * nothing printed. */
    int external = 0;
    context->_private = &external;
    context->sax->entityDecl = declare_entity;
    xmlDocPtr document = easel_xml.xmlCtxtReadMemory(context, (const char *)data, (int)size, NULL, NULL,
                                           XML_PARSE_NOENT | XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
    if (external) {
        snprintf(message, EASEL_SVG_MESSAGE_SIZE, "the document declares an external entity (never loaded)");
        if (document) easel_xml.xmlFreeDoc(document);
        easel_xml.xmlFreeParserCtxt(context);
        return 0;
    }
    if (!document || !context->wellFormed || !context->nsWellFormed) {
        const xmlError *error = easel_xml.xmlCtxtGetLastError(context);
        snprintf(message, EASEL_SVG_MESSAGE_SIZE, "not well-formed XML%s%s%s", document && !context->nsWellFormed ? " (namespaces)" : "",
                 error && error->message ? ": " : "", error && error->message ? error->message : "");
        /* libxml2's messages end in a line break. */
        size_t length = strlen(message);
        if (length > 0 && message[length - 1] == '\n') message[length - 1] = 0;
        if (document) easel_xml.xmlFreeDoc(document);
        easel_xml.xmlFreeParserCtxt(context);
        return 0;
    }
    easel_xml.xmlFreeParserCtxt(context);
    xmlNodePtr root = easel_xml.xmlDocGetRootElement(document);
    if (!root || strcmp((const char *)root->name, "svg") != 0 ||
        (root->ns && (!root->ns->href || strcmp((const char *)root->ns->href, svg_namespace) != 0))) {
        snprintf(message, EASEL_SVG_MESSAGE_SIZE, "not an SVG document (its root is <%s>)", root ? (const char *)root->name : "");
        easel_xml.xmlFreeDoc(document);
        return 0;
    }
    walk state = {.elements = 1, .max_elements = max_elements, .svg_without_namespace = root->ns == NULL, .message = message};
    /* The document's own level: the root stays, the DTD and everything else go. */
    xmlNodePtr node = document->children;
    while (node) {
        xmlNodePtr next = node->next;
        if (node != root) drop(node);
        node = next;
    }
    document->intSubset = NULL;
    document->extSubset = NULL;
    if (state.svg_without_namespace) {
        xmlNsPtr space = easel_xml.xmlNewNs(root, (const xmlChar *)svg_namespace, NULL);
        if (!space) {
            /* (`xmlns=""` on the root: a default namespace already declared, empty.) */
            snprintf(message, EASEL_SVG_MESSAGE_SIZE, "not an SVG document (its root declares an empty namespace)");
            easel_xml.xmlFreeDoc(document);
            return 0;
        }
        easel_xml.xmlSetNs(root, space);
    }
    clean_attributes(root);
    if (!clean_children(&state, root)) {
        easel_xml.xmlFreeDoc(document);
        return 0;
    }
    xmlChar *bytes = NULL;
    int length = 0;
    easel_xml.xmlDocDumpMemoryEnc(document, &bytes, &length, "UTF-8");
    easel_xml.xmlFreeDoc(document);
    if (!bytes || length <= 0) {
        if (bytes) xml_free(bytes);
        snprintf(message, EASEL_SVG_MESSAGE_SIZE, "could not write the document");
        return 0;
    }
    if ((size_t)length > max_output) {
        xml_free(bytes);
        snprintf(message, EASEL_SVG_MESSAGE_SIZE, "the cleaned document would be %d bytes (the limit is %zu)", length, max_output);
        return 0;
    }
    *output = bytes;
    *output_size = (size_t)length;
    return 1;
}

void easel_svg_free(uint8_t *bytes) {
    if (bytes) xml_free(bytes);
}
