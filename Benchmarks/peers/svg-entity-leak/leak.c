/* Does librsvg 2.54 (libxml2 2.9.14 underneath) keep memory per document loaded? Loads a plain
 * SVG, then one whose internal DTD subset declares entities, 40,000 times each through the same
 * calls Easel's shim makes, and prints how much the resident set grew over the last 38,000.
 * Built and run by svg-entity-leak.sh. */
#include <librsvg/rsvg.h>
#include <stdio.h>
#include <string.h>
static long rss(void) { FILE *f = fopen("/proc/self/statm", "r"); long a, b; fscanf(f, "%ld %ld", &a, &b); fclose(f); return b * 4; }
int main(int argc, char **argv) {
    const char *entities = "<?xml version='1.0'?><!DOCTYPE svg [<!ENTITY ns 'http://www.w3.org/2000/svg'><!ENTITY c '#369'>]><svg xmlns='&ns;' width='10' height='10'><rect width='10' height='10' fill='&c;'/></svg>";
    const char *plain = "<svg xmlns='http://www.w3.org/2000/svg' width='10' height='10'><rect width='10' height='10' fill='#369'/></svg>";
    const char *docs[2] = {plain, entities};
    for (int d = 0; d < 2; d++) {
        long before = 0;
        for (int i = 0; i < 40000; i++) {
            if (i == 2000) before = rss();
            RsvgHandle *h = rsvg_handle_new_with_flags(RSVG_HANDLE_FLAGS_NONE);
            GInputStream *s = g_memory_input_stream_new_from_data(docs[d], strlen(docs[d]), NULL);
            GError *e = NULL;
            gboolean ok = rsvg_handle_read_stream_sync(h, s, NULL, &e);
            if (e) g_error_free(e);
            g_object_unref(s); g_object_unref(h);
            if (i == 0) printf("%s: loads %s\n", d ? "with entities" : "plain", ok ? "ok" : "fails");
        }
        printf("%s: resident set grew %ld KB over 38000 loads\n", d ? "with entities" : "plain", rss() - before);
    }
}
