#define _GNU_SOURCE
#include "easel_platform.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <string.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

int easel_pipe_cloexec(int fds[2]) { return pipe2(fds, O_CLOEXEC); }

int easel_leave_network(void) {
    if (unshare(CLONE_NEWNET) == 0) return 0;
    return unshare(CLONE_NEWUSER | CLONE_NEWNET) == 0 ? 0 : -1;
}

long easel_cpu_seconds_used(void) {
    struct rusage usage;
    if (getrusage(RUSAGE_SELF, &usage) != 0) return 0;
    return (long)usage.ru_utime.tv_sec + (long)usage.ru_stime.tv_sec + 1;
}

int easel_limit_cpu(long more_seconds) {
    struct rlimit limit;
    if (getrlimit(RLIMIT_CPU, &limit) != 0) return -1;
    rlim_t wanted = (rlim_t)(easel_cpu_seconds_used() + (more_seconds > 0 ? more_seconds : 1));
    if (limit.rlim_max != RLIM_INFINITY && wanted > limit.rlim_max) wanted = limit.rlim_max;
    limit.rlim_cur = wanted;
    return setrlimit(RLIMIT_CPU, &limit);
}

int easel_is_sanitized(void) {
    return dlsym(RTLD_DEFAULT, "__tsan_init") != NULL || dlsym(RTLD_DEFAULT, "__asan_init") != NULL;
}

static long watched_limit;

static void *watch_resident(void *unused) {
    (void)unused;
    long page = sysconf(_SC_PAGESIZE);
    for (;;) {
        FILE *statm = fopen("/proc/self/statm", "r");
        long size = 0, resident = 0;
        if (statm) {
            if (fscanf(statm, "%ld %ld", &size, &resident) != 2) resident = 0;
            fclose(statm);
        }
        /* SIGKILL, not abort(): a sanitizer's runtime turns abort() into a report it
           symbolises first, which can outlast the parent's deadline. */
        if (resident * page > watched_limit) kill(getpid(), SIGKILL);
        struct timespec pause = {0, 10 * 1000 * 1000};
        nanosleep(&pause, NULL);
    }
    return NULL;
}

int easel_watch_resident_memory(long bytes) {
    watched_limit = bytes;
    pthread_t thread;
    if (pthread_create(&thread, NULL, watch_resident, NULL) != 0) return -1;
    return pthread_detach(thread);
}

int easel_spawn_close_from(posix_spawn_file_actions_t *actions, int from) {
    return posix_spawn_file_actions_addclosefrom_np(actions, from);
}

int easel_spawnattr_clean(posix_spawnattr_t *attributes) {
    if (posix_spawnattr_init(attributes) != 0) return -1;
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_setsigmask(attributes, &none);
    posix_spawnattr_setsigdefault(attributes, &all);
    return posix_spawnattr_setflags(attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
}

void easel_worker_signals(void) {
    sigset_t none;
    sigemptyset(&none);
    pthread_sigmask(SIG_SETMASK, &none, NULL);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    /* A crash ends the worker by its signal, at once: no crash handler (the Swift runtime's
       backtracer, a sanitizer's report) outlasts the parent's deadline or turns the signal into
       an exit status. The parent names the signal; the worker has nothing else to report. */
    int deadly[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP};
    for (unsigned i = 0; i < sizeof deadly / sizeof deadly[0]; i++) signal(deadly[i], SIG_DFL);
    /* The parent may have gone before the line above: then there is nobody to work for. */
    if (getppid() == 1) _exit(0);
}

void easel_ignore_termination_signals(void) {
    signal(SIGINT, SIG_IGN);
    signal(SIGTERM, SIG_IGN);
    signal(SIGHUP, SIG_IGN);
}

struct build_id_search {
    unsigned char *out;
    int capacity;
    int length;
};

/* The first object dl_iterate_phdr reports is the program itself: its notes, then stop. */
static int find_build_id(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    struct build_id_search *search = data;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *segment = &info->dlpi_phdr[i];
        if (segment->p_type != PT_NOTE) continue;
        size_t align = segment->p_align == 8 ? 8 : 4;
        const unsigned char *note = (const unsigned char *)(info->dlpi_addr + segment->p_vaddr);
        const unsigned char *end = note + segment->p_memsz;
        /* Each note: its header, the name from just after it, the description from the name's end
           rounded up to the segment's alignment, the next note from the description's end
           rounded up the same way (offsets from the note's start). */
        while ((size_t)(end - note) >= sizeof(ElfW(Nhdr))) {
            const ElfW(Nhdr) *header = (const ElfW(Nhdr) *)note;
            size_t available = (size_t)(end - note);
            size_t desc_offset = (sizeof(ElfW(Nhdr)) + header->n_namesz + align - 1) & ~(align - 1);
            if (desc_offset > available || header->n_descsz > available - desc_offset) break;
            size_t next = (desc_offset + header->n_descsz + align - 1) & ~(align - 1);
            const unsigned char *name = note + sizeof(ElfW(Nhdr));
            const unsigned char *desc = note + desc_offset;
            if (header->n_type == NT_GNU_BUILD_ID && header->n_namesz == 4 && memcmp(name, "GNU", 4) == 0) {
                int length = (int)header->n_descsz;
                memcpy(search->out, desc, (size_t)(length < search->capacity ? length : search->capacity));
                search->length = length;
                return 1;
            }
            if (next >= available) break;
            note += next;
        }
    }
    return 1;
}

int easel_build_id(unsigned char *out, int capacity) {
    struct build_id_search search = {out, capacity < 0 ? 0 : capacity, 0};
    dl_iterate_phdr(find_build_id, &search);
    return search.length;
}
