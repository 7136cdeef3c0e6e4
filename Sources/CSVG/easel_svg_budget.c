#include "easel_svg.h"
#include "easel_libxml2.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The parse-time budget of an SVG (easel_svg.h): one streaming pass of libxml2's reader, with no
 * network and no entity expansion, counting what makes renderers crash, loop or allocate. */

typedef struct {
    const easel_svg_budget *budget;
    long filter_primitives, uses, masks, text_characters, style_characters;
    int in_text_depth; /* depth of the outermost <text> we are in, or -1 */
    int in_style_depth;
    char *style;       /* the current <style>'s text so far (checked whole at its end tag) */
    size_t style_length;
    char *message;
} budget_state;

static int refuse(budget_state *state, const char *format, long value, long limit) {
    snprintf(state->message, EASEL_SVG_MESSAGE_SIZE, format, value, limit);
    return 0;
}

/* The largest number that follows "font-size" or "font" and a colon (CSS) in `text`, or 0. */
static double largest_font_size_in_css(const char *text) {
    double largest = 0;
    for (const char *at = strstr(text, "font"); at; at = strstr(at + 4, "font")) {
        const char *p = at + 4;
        if (strncmp(p, "-size", 5) == 0) p += 5;
        while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
        if (*p != ':') continue;
        p++;
        /* The shorthand may start with a style or weight: the first number in the next 64 bytes. */
        for (int i = 0; i < 64 && *p && *p != ';' && *p != '}'; i++, p++) {
            if ((*p >= '0' && *p <= '9') || *p == '.') {
                char *end = NULL;
                double value = strtod(p, &end);
                if (!isfinite(value)) return INFINITY;
                if (value > largest) largest = value;
                break;
            }
        }
    }
    return largest;
}

/* The attribute `name` of the current element as a number (strtod: 0 when absent or not one). */
static double number_attribute(xmlTextReaderPtr reader, const char *name, int *present) {
    xmlChar *value = easel_xml.xmlTextReaderGetAttribute(reader, (const xmlChar *)name);
    *present = value != NULL;
    if (!value) return 0;
    double number = strtod((const char *)value, NULL);
    xml_free(value);
    return number;
}

/* How many numbers a whitespace- or comma-separated list holds. */
static long count_numbers(const char *text) {
    long count = 0;
    int in_number = 0;
    for (const char *p = text; *p; p++) {
        int separator = *p == ' ' || *p == ',' || *p == '\t' || *p == '\n' || *p == '\r';
        if (!separator && !in_number) count++;
        in_number = !separator;
    }
    return count;
}

static int check_convolution(budget_state *state, xmlTextReaderPtr reader) {
    xmlChar *order = easel_xml.xmlTextReaderGetAttribute(reader, (const xmlChar *)"order");
    long x = 3, y = 3;
    if (order) {
        char *end = NULL;
        x = strtol((const char *)order, &end, 10);
        y = x;
        while (end && (*end == ' ' || *end == ',')) end++;
        if (end && *end) y = strtol(end, NULL, 10);
        xml_free(order);
    }
    long most = state->budget->max_kernel_order;
    if (x < 1 || y < 1 || x > most || y > most) return refuse(state, "feConvolveMatrix of order %ld (the limit is %ld)", x > y ? x : y, most);
    xmlChar *matrix = easel_xml.xmlTextReaderGetAttribute(reader, (const xmlChar *)"kernelMatrix");
    long count = matrix ? count_numbers((const char *)matrix) : 0;
    if (matrix) xml_free(matrix);
    if (count != x * y) return refuse(state, "feConvolveMatrix with %ld kernel values (its order asks for %ld)", count, x * y);
    return 1;
}

static int check_font_size(budget_state *state, xmlTextReaderPtr reader) {
    int present = 0;
    double size = number_attribute(reader, "font-size", &present);
    xmlChar *style = easel_xml.xmlTextReaderGetAttribute(reader, (const xmlChar *)"style");
    if (style) {
        double css = largest_font_size_in_css((const char *)style);
        if (css > size) size = css;
        xml_free(style);
    }
    if (!(size <= state->budget->max_font_size)) {
        return refuse(state, "a font size of %ld (the limit is %ld)", isfinite(size) && size < 1e15 ? (long)size : 999999999999999L,
                      (long)state->budget->max_font_size);
    }
    return 1;
}

static int check_element(budget_state *state, xmlTextReaderPtr reader, const char *name, int depth) {
    const easel_svg_budget *budget = state->budget;
    if (depth > budget->max_depth) return refuse(state, "elements nested %ld deep (the limit is %ld)", (long)depth, budget->max_depth);
    if (name[0] == 'f' && name[1] == 'e' && ++state->filter_primitives > budget->max_filter_primitives) {
        return refuse(state, "more than %ld filter primitives (the limit is %ld)", budget->max_filter_primitives, budget->max_filter_primitives);
    }
    if (strcmp(name, "feTurbulence") == 0) {
        int present = 0;
        double octaves = number_attribute(reader, "numOctaves", &present);
        if (!(octaves <= budget->max_octaves)) {
            return refuse(state, "feTurbulence with %ld octaves (the limit is %ld)", octaves < 1e15 ? (long)octaves : 999999999999999L, budget->max_octaves);
        }
    }
    if (strcmp(name, "feConvolveMatrix") == 0 && !check_convolution(state, reader)) return 0;
    if (strcmp(name, "use") == 0 && ++state->uses > budget->max_uses) {
        return refuse(state, "more than %ld <use> elements (the limit is %ld)", budget->max_uses, budget->max_uses);
    }
    if (strcmp(name, "mask") == 0 && ++state->masks > budget->max_masks) {
        return refuse(state, "more than %ld masks (the limit is %ld)", budget->max_masks, budget->max_masks);
    }
    if (strcmp(name, "text") == 0 && state->in_text_depth < 0 && !easel_xml.xmlTextReaderIsEmptyElement(reader)) state->in_text_depth = depth;
    if (strcmp(name, "style") == 0 && !easel_xml.xmlTextReaderIsEmptyElement(reader)) state->in_style_depth = depth;
    return check_font_size(state, reader);
}

/* Adds text to the current <style>'s (its parts, split by comments or CDATA, are one sheet to
 * librsvg), within the byte limit. */
static int collect_css(budget_state *state, const char *text) {
    size_t length = strlen(text);
    state->style_characters += (long)length;
    if (state->style_characters > state->budget->max_style_bytes) {
        return refuse(state, "%ld bytes of CSS (the limit is %ld)", state->style_characters, state->budget->max_style_bytes);
    }
    char *grown = realloc(state->style, state->style_length + length + 1);
    if (!grown) {
        snprintf(state->message, EASEL_SVG_MESSAGE_SIZE, "out of memory");
        return 0;
    }
    memcpy(grown + state->style_length, text, length + 1);
    state->style = grown;
    state->style_length += length;
    return 1;
}

/* Checks a <style> element's whole text: its nesting of parentheses and brackets (deep
 * selectors such as :not( 3,000 times overflow the CSS parser's stack) and its font sizes. */
static int check_css(budget_state *state, const char *text) {
    const easel_svg_budget *budget = state->budget;
    long depth = 0, deepest = 0;
    for (const char *p = text; *p; p++) {
        if (*p == '(' || *p == '[' || *p == '{') depth++;
        else if ((*p == ')' || *p == ']' || *p == '}') && depth > 0) depth--;
        if (depth > deepest) deepest = depth;
    }
    if (deepest > budget->max_css_nesting) return refuse(state, "CSS nested %ld deep (the limit is %ld)", deepest, budget->max_css_nesting);
    double size = largest_font_size_in_css(text);
    if (!(size <= budget->max_font_size)) {
        return refuse(state, "a font size of %ld (the limit is %ld)", isfinite(size) && size < 1e15 ? (long)size : 999999999999999L,
                      (long)budget->max_font_size);
    }
    return 1;
}

int easel_svg_check_budget(const uint8_t *data, size_t size, const easel_svg_budget *budget, char *message) {
    message[0] = 0;
    if (!easel_xml_require(message, EASEL_SVG_MESSAGE_SIZE)) return EASEL_LAZY_UNAVAILABLE;
    if (size > (size_t)0x7fffffff) {
        snprintf(message, EASEL_SVG_MESSAGE_SIZE, "the document is too large");
        return 0;
    }
    xmlTextReaderPtr reader = easel_xml.xmlReaderForMemory((const char *)data, (int)size, NULL, NULL,
                                                 XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING | XML_PARSE_NOCDATA);
    if (!reader) {
        snprintf(message, EASEL_SVG_MESSAGE_SIZE, "out of memory");
        return 0;
    }
    budget_state state = {.budget = budget, .in_text_depth = -1, .in_style_depth = -1, .message = message};
    int ok = 1, result;
    while (ok && (result = easel_xml.xmlTextReaderRead(reader)) == 1) {
        int type = easel_xml.xmlTextReaderNodeType(reader), depth = easel_xml.xmlTextReaderDepth(reader);
        if (type == XML_READER_TYPE_ELEMENT) {
            const char *name = (const char *)easel_xml.xmlTextReaderConstLocalName(reader);
            ok = check_element(&state, reader, name ? name : "", depth);
        } else if (type == XML_READER_TYPE_END_ELEMENT) {
            if (depth == state.in_text_depth) state.in_text_depth = -1;
            if (depth == state.in_style_depth) {
                state.in_style_depth = -1;
                ok = check_css(&state, state.style ? state.style : "");
                state.style_length = 0;
                if (state.style) state.style[0] = 0;
            }
        } else if (type == XML_READER_TYPE_PROCESSING_INSTRUCTION) {
            const char *name = (const char *)easel_xml.xmlTextReaderConstLocalName(reader);
            if (name && strcmp(name, "xml-stylesheet") == 0) {
                snprintf(message, EASEL_SVG_MESSAGE_SIZE, "an xml-stylesheet instruction (style sheets come only from <style>)");
                ok = 0;
            }
        } else if (type == XML_READER_TYPE_TEXT || type == XML_READER_TYPE_CDATA || type == XML_READER_TYPE_SIGNIFICANT_WHITESPACE) {
            const char *text = (const char *)easel_xml.xmlTextReaderConstValue(reader);
            if (!text) continue;
            if (state.in_style_depth >= 0) {
                ok = collect_css(&state, text);
            } else if (state.in_text_depth >= 0) {
                state.text_characters += (long)strlen(text);
                if (state.text_characters > budget->max_text_characters) {
                    ok = refuse(&state, "more than %ld bytes of text (the limit is %ld)", budget->max_text_characters, budget->max_text_characters);
                }
            }
        }
    }
    /* A style sheet the document never closed is checked as it is. */
    if (ok && state.in_style_depth >= 0) ok = check_css(&state, state.style ? state.style : "");
    free(state.style);
    easel_xml.xmlFreeTextReader(reader);
    /* A document libxml2 cannot read to its end is librsvg's to refuse (its own message). */
    return ok;
}
