#define _GNU_SOURCE
#include "easel_input.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <string.h>
#include <unistd.h>

/* One registered mapping: [start, end), where the current forward reader's hand-back has got
 * to (`kept`), and whether its file shrank under it. A free slot has start 0. Every change is
 * made under `table_lock` between two increments of `generation` (odd while it changes), so the
 * SIGBUS handler, which cannot lock, reads a slot only when its generation is even and the same
 * before and after (a seqlock): it never acts on a slot torn by a concurrent map or unmap. */
typedef struct {
    _Atomic unsigned generation;
    _Atomic uintptr_t start;
    _Atomic uintptr_t end;
    uintptr_t kept;
    _Atomic int changed;
    /* Under table_lock: the file, kept open while it is mapped (a file with no descriptor left
     * to keep is not mapped), and its size and modification time when it was mapped (a
     * write in place changes them: easel_input_changed looks). Not the change time: an unlink,
     * a rename over the file, chmod or a new link change it with the contents as they were. */
    int fd;
    long long stamp[3];
} mapping;

enum { SLOTS = 256, RELEASE_STEP = 1 << 20 };
static mapping slots[SLOTS];

static void stamp_of(const struct stat *status, long long stamp[3]) {
    stamp[0] = (long long)status->st_size;
    stamp[1] = (long long)status->st_mtim.tv_sec;
    stamp[2] = (long long)status->st_mtim.tv_nsec;
}
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
/* Mappings registered now: 0 lets every lookup return at once (a decoder asks per row). */
static _Atomic int active;
static struct sigaction previous;
static pthread_once_t handler_once = PTHREAD_ONCE_INIT;
/* Set once, before the first mapping is registered (sysconf is not async-signal-safe). */
static _Atomic uintptr_t page_size = 4096;

/* Under table_lock: the slot whose mapping holds `address`; with `or_ends`, also one that ends
 * there (a reader that has read all of it points at its end), a mapping that holds it winning. */
static mapping *slot_holding(uintptr_t address, int or_ends) {
    mapping *ending = NULL;
    for (int i = 0; i < SLOTS; i++) {
        uintptr_t start = atomic_load(&slots[i].start);
        if (start == 0 || address < start) continue;
        uintptr_t end = atomic_load(&slots[i].end);
        if (address < end) return &slots[i];
        if (or_ends && address == end) ending = &slots[i];
    }
    return ending;
}

static void change_slot(mapping *slot, uintptr_t start, uintptr_t end) {
    atomic_fetch_add(&slot->generation, 1);
    atomic_store(&slot->start, start);
    atomic_store(&slot->end, end);
    slot->kept = start;
    atomic_store(&slot->changed, 0);
    atomic_fetch_add(&slot->generation, 1);
}

static void pass_on(int signal_number, siginfo_t *info, void *context) {
    if (previous.sa_flags & SA_SIGINFO) {
        if (previous.sa_sigaction) previous.sa_sigaction(signal_number, info, context);
        return;
    }
    /* A fault ignored would recur forever: the kernel's default for it, as without a handler. */
    if (previous.sa_handler != SIG_DFL && !(previous.sa_handler == SIG_IGN && info->si_code > 0)) {
        if (previous.sa_handler != SIG_IGN) previous.sa_handler(signal_number);
        return;
    }
    signal(SIGBUS, SIG_DFL);
    if (info->si_code <= 0) raise(SIGBUS); /* sent, not a fault: it would not come again */
}

/* A read past the end of a mapped file that shrank (BUS_ADRERR): zeros over the rest of that
 * mapping, and the mapping marked; the read is retried and finds them. Any other SIGBUS (a
 * hardware memory error, an I/O error, one sent by a process, a fault elsewhere) goes on as
 * before. Async-signal-safe: atomic loads, mmap, and errno saved. */
static void on_bus_error(int signal_number, siginfo_t *info, void *context) {
    int saved_errno = errno;
    if (info->si_code == BUS_ADRERR && atomic_load(&active) > 0) {
        uintptr_t address = (uintptr_t)info->si_addr, page_mask = ~(atomic_load(&page_size) - 1);
        for (int i = 0; i < SLOTS; i++) {
            unsigned before = atomic_load(&slots[i].generation);
            if (before & 1) continue;
            uintptr_t start = atomic_load(&slots[i].start), end = atomic_load(&slots[i].end);
            if (atomic_load(&slots[i].generation) != before || start == 0 || address < start || address >= end) continue;
            uintptr_t page = address & page_mask;
            if (mmap((void *)page, end - page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != MAP_FAILED) {
                atomic_store(&slots[i].changed, 1);
                errno = saved_errno;
                return;
            }
        }
    }
    errno = saved_errno;
    pass_on(signal_number, info, context);
}

static void install_handler(void) {
    atomic_store(&page_size, (uintptr_t)sysconf(_SC_PAGESIZE));
    struct sigaction action = {0};
    action.sa_sigaction = on_bus_error;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&action.sa_mask);
    sigaction(SIGBUS, &action, &previous);
}

const uint8_t *easel_input_map(const char *path, size_t max_size, size_t *size, int *error_number) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        *error_number = errno;
        return NULL;
    }
    const uint8_t *start = easel_input_map_descriptor(fd, max_size, size, error_number);
    close(fd);
    return start;
}

const uint8_t *easel_input_map_descriptor(int fd, size_t max_size, size_t *size, int *error_number) {
    struct stat status;
    if (fstat(fd, &status) != 0) {
        *error_number = errno;
        return NULL;
    }
    if (!S_ISREG(status.st_mode) || status.st_size <= 0) {
        *error_number = EINVAL;
        return NULL;
    }
    if ((uint64_t)status.st_size > (uint64_t)max_size) {
        *size = (size_t)status.st_size;
        *error_number = EFBIG;
        return NULL;
    }
    pthread_once(&handler_once, install_handler);
    size_t length = (size_t)status.st_size;
    void *start = mmap(NULL, length, PROT_READ, MAP_PRIVATE, fd, 0);
    if (start == MAP_FAILED) {
        *error_number = ENODEV; /* not mappable (some file systems): read it instead */
        return NULL;
    }
    /* The file stays open while it is mapped, so that a change to it can be told (its size and
     * modification time, by fstat): with no descriptor left to keep, it is read instead. */
    int kept = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (kept < 0) {
        munmap(start, length);
        *error_number = ENOSPC;
        return NULL;
    }
    pthread_mutex_lock(&table_lock);
    mapping *slot = NULL;
    for (int i = 0; i < SLOTS && !slot; i++) {
        if (atomic_load(&slots[i].start) == 0) slot = &slots[i];
    }
    if (slot) {
        slot->fd = kept;
        stamp_of(&status, slot->stamp);
        change_slot(slot, (uintptr_t)start, (uintptr_t)start + length);
        atomic_fetch_add(&active, 1);
    }
    pthread_mutex_unlock(&table_lock);
    if (!slot) {
        close(kept);
        munmap(start, length);
        *error_number = ENOSPC;
        return NULL;
    }
    *size = length;
    return start;
}

void easel_input_unmap(const uint8_t *start, size_t size) {
    pthread_mutex_lock(&table_lock);
    for (int i = 0; i < SLOTS; i++) {
        if (atomic_load(&slots[i].start) == (uintptr_t)start) {
            change_slot(&slots[i], 0, 0);
            if (slots[i].fd >= 0) close(slots[i].fd);
            slots[i].fd = -1;
            atomic_fetch_sub(&active, 1);
            break;
        }
    }
    pthread_mutex_unlock(&table_lock);
    munmap((void *)start, size);
}

int easel_input_changed(const void *position) {
    if (atomic_load(&active) == 0) return 0;
    pthread_mutex_lock(&table_lock);
    mapping *slot = slot_holding((uintptr_t)position, 0);
    int changed = slot ? atomic_load(&slot->changed) : 0;
    int fd = slot ? slot->fd : -1;
    long long stamp[3] = {0, 0, 0};
    if (slot) memcpy(stamp, slot->stamp, sizeof(stamp));
    pthread_mutex_unlock(&table_lock);
    /* fstat outside the lock (a slow file system must not hold up every reader): the caller
     * holds the mapping, so its slot and descriptor stay until it unmaps. */
    struct stat status;
    if (!changed && fd >= 0 && fstat(fd, &status) == 0) {
        long long now[3];
        stamp_of(&status, now);
        changed = memcmp(now, stamp, sizeof(now)) != 0;
    }
    return changed;
}

int easel_input_is_mapped(const void *position) {
    if (atomic_load(&active) == 0) return 0;
    pthread_mutex_lock(&table_lock);
    int mapped = slot_holding((uintptr_t)position, 0) != NULL;
    pthread_mutex_unlock(&table_lock);
    return mapped;
}

/* Under table_lock: the range [from, to) a reader at `position` hands back now (from == to when
 * nothing is due), the slot's cursor moved. `from_start` hands back everything behind it. */
static void due_range(const void *position, int from_start, uintptr_t *from, uintptr_t *to) {
    *from = *to = 0;
    mapping *slot = slot_holding((uintptr_t)position, 1);
    if (!slot) return;
    uintptr_t upto = (uintptr_t)position & ~(atomic_load(&page_size) - 1);
    /* A reader behind the hand-back is a new pass over the file (another decode of it, or a
     * reader that jumped back): its hand-back starts again from the start. */
    if (upto < slot->kept) slot->kept = atomic_load(&slot->start);
    if (upto < slot->kept + RELEASE_STEP) return;
    *from = from_start ? atomic_load(&slot->start) : slot->kept;
    *to = upto;
    slot->kept = upto;
}

/* The madvise runs outside the lock: the mapping is the caller's (it cannot be unmapped while
 * its reader runs), and other readers need not wait for it. */
static void release(const void *position, int from_start) {
    if (atomic_load(&active) == 0) return;
    uintptr_t from, to;
    pthread_mutex_lock(&table_lock);
    due_range(position, from_start, &from, &to);
    pthread_mutex_unlock(&table_lock);
    if (to > from) madvise((void *)from, to - from, MADV_DONTNEED);
}

void easel_input_release(const void *position) { release(position, 0); }

void easel_input_release_all(const void *position) {
    if (atomic_load(&active) == 0) return;
    uintptr_t from = 0, to = 0;
    pthread_mutex_lock(&table_lock);
    mapping *slot = slot_holding((uintptr_t)position, 0);
    if (slot) {
        from = atomic_load(&slot->start);
        to = atomic_load(&slot->end);
        slot->kept = from;
    }
    pthread_mutex_unlock(&table_lock);
    if (to > from) madvise((void *)from, to - from, MADV_DONTNEED);
}

void easel_input_release_behind(const void *position) { release(position, 1); }
