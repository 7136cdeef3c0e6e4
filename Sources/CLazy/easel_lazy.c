#include "easel_lazy.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* One lock for every library: each is loaded once, and a load is rare and short next to the
 * work that needs it. */
static pthread_mutex_t loader = PTHREAD_MUTEX_INITIALIZER;

static int load_locked(easel_lazy_library *library) {
    void *handles[8] = {NULL};
    if (library->soname_count > 8) {
        snprintf(library->problem, sizeof library->problem, "too many libraries in one set");
        return 0;
    }
    for (size_t i = 0; i < library->soname_count; i++) {
        handles[i] = dlopen(library->sonames[i], RTLD_NOW | RTLD_LOCAL);
        if (!handles[i]) {
            const char *why = dlerror();
            snprintf(library->problem, sizeof library->problem, "%s could not be loaded (%s)", library->sonames[i],
                     why ? why : "no reason given");
            return 0;
        }
    }
    for (size_t s = 0; s < library->symbol_count; s++) {
        void *address = NULL;
        for (size_t i = 0; i < library->soname_count && !address; i++) address = dlsym(handles[i], library->symbols[s].name);
        if (!address) {
            snprintf(library->problem, sizeof library->problem, "no %s in %s%s", library->symbols[s].name, library->sonames[0],
                     library->soname_count > 1 ? " or the libraries loaded with it" : "");
            return 0;
        }
        memcpy((char *)library->functions + library->symbols[s].offset, &address, sizeof address);
    }
    return !library->verify || library->verify(library->problem, sizeof library->problem);
}

static void (*_Atomic after_load)(void);

void easel_lazy_after_load(void (*hook)(void)) { after_load = hook; }

void easel_lazy_loaded_elsewhere(void) {
    void (*hook)(void) = after_load;
    if (hook) hook();
}

int easel_lazy_load(easel_lazy_library *library) {
    /* Loaded already (the usual case): no lock. The state is written with release under the lock. */
    int state = __atomic_load_n(&library->state, __ATOMIC_ACQUIRE);
    if (state != 0) return state == 1;
    pthread_mutex_lock(&loader);
    int first = library->state == 0;
    if (first) __atomic_store_n(&library->state, load_locked(library) ? 1 : -1, __ATOMIC_RELEASE);
    int loaded = library->state == 1;
    pthread_mutex_unlock(&loader);
    if (first && loaded) easel_lazy_loaded_elsewhere();
    return loaded;
}

int easel_lazy_require(easel_lazy_library *library, char *message, size_t message_size) {
    if (easel_lazy_load(library)) return 1;
    if (message && message_size > 0) snprintf(message, message_size, "%s", library->problem);
    return 0;
}
