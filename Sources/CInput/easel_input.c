#define _GNU_SOURCE
#include "easel_input.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* One registered mapping: [start, end), the start of what has not been handed back yet, and
 * whether its file shrank under it. A free slot has start 0; a slot being filled has start 1. */
typedef struct {
    _Atomic uintptr_t start;
    _Atomic uintptr_t end;
    _Atomic uintptr_t kept;
    _Atomic int changed;
} mapping;

enum { SLOTS = 256, RELEASE_STEP = 1 << 20 };
static mapping slots[SLOTS];
/* Mappings registered now: 0 lets every lookup return at once (a decoder asks per row). */
static _Atomic int active;
static struct sigaction previous;
static pthread_once_t handler_once = PTHREAD_ONCE_INIT;
/* Set before the first mapping (sysconf is not on the async-signal-safe list). */
static uintptr_t page_size = 4096;

/* The slot whose mapping holds `address`, or NULL; with `or_ends`, also one that ends there (a
 * decoder that has read all of it points at its end; a mapping that holds the address wins over
 * one that ends there). Async-signal-safe: atomic loads only. */
static mapping *slot_holding(uintptr_t address, int or_ends) {
    mapping *ending = NULL;
    if (atomic_load_explicit(&active, memory_order_acquire) == 0) return NULL;
    for (int i = 0; i < SLOTS; i++) {
        uintptr_t start = atomic_load_explicit(&slots[i].start, memory_order_acquire);
        if (start <= 1 || address < start) continue;
        uintptr_t end = atomic_load_explicit(&slots[i].end, memory_order_relaxed);
        if (address < end) return &slots[i];
        if (or_ends && address == end) ending = &slots[i];
    }
    return ending;
}

static void pass_on(int signal_number, siginfo_t *info, void *context) {
    if (previous.sa_flags & SA_SIGINFO) {
        if (previous.sa_sigaction) previous.sa_sigaction(signal_number, info, context);
        return;
    }
    if (previous.sa_handler == SIG_IGN) return;
    if (previous.sa_handler != SIG_DFL) {
        previous.sa_handler(signal_number);
        return;
    }
    /* The default: end the process by this signal (a fault recurs when the handler returns). */
    signal(SIGBUS, SIG_DFL);
    if (info->si_code <= 0) raise(SIGBUS);
}

/* A read past the end of a file that shrank: zeros over the rest of that mapping, and the
 * mapping marked; the read is retried and finds them. Any other SIGBUS goes on as before. */
static void on_bus_error(int signal_number, siginfo_t *info, void *context) {
    if (info->si_code > 0) {
        uintptr_t address = (uintptr_t)info->si_addr;
        mapping *m = slot_holding(address, 0);
        if (m) {
            uintptr_t end = atomic_load_explicit(&m->end, memory_order_relaxed);
            uintptr_t page = address & ~(page_size - 1);
            void *zeros = mmap((void *)page, end - page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
            if (zeros != MAP_FAILED) {
                atomic_store(&m->changed, 1);
                return;
            }
        }
    }
    pass_on(signal_number, info, context);
}

static void install_handler(void) {
    page_size = (uintptr_t)sysconf(_SC_PAGESIZE);
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
    struct stat status;
    if (fstat(fd, &status) != 0) {
        *error_number = errno;
        close(fd);
        return NULL;
    }
    if (!S_ISREG(status.st_mode) || status.st_size <= 0) {
        *error_number = EINVAL;
        close(fd);
        return NULL;
    }
    if ((uint64_t)status.st_size > (uint64_t)max_size) {
        *size = (size_t)status.st_size;
        *error_number = EFBIG;
        close(fd);
        return NULL;
    }
    mapping *slot = NULL;
    atomic_fetch_add(&active, 1);
    for (int i = 0; i < SLOTS && !slot; i++) {
        uintptr_t free_slot = 0;
        if (atomic_compare_exchange_strong(&slots[i].start, &free_slot, 1)) slot = &slots[i];
    }
    if (!slot) {
        atomic_fetch_sub(&active, 1);
        *error_number = ENOSPC;
        close(fd);
        return NULL;
    }
    pthread_once(&handler_once, install_handler);
    size_t length = (size_t)status.st_size;
    void *start = mmap(NULL, length, PROT_READ, MAP_PRIVATE, fd, 0);
    int mapped_errno = errno;
    close(fd);
    if (start == MAP_FAILED) {
        atomic_store(&slot->start, 0);
        atomic_fetch_sub(&active, 1);
        *error_number = mapped_errno;
        return NULL;
    }
    atomic_store(&slot->end, (uintptr_t)start + length);
    atomic_store(&slot->kept, (uintptr_t)start);
    atomic_store(&slot->changed, 0);
    atomic_store_explicit(&slot->start, (uintptr_t)start, memory_order_release);
    *size = length;
    return start;
}

void easel_input_unmap(const uint8_t *start, size_t size) {
    for (int i = 0; i < SLOTS; i++) {
        uintptr_t expected = (uintptr_t)start;
        if (atomic_compare_exchange_strong(&slots[i].start, &expected, 0)) {
            atomic_fetch_sub(&active, 1);
            break;
        }
    }
    munmap((void *)start, size);
}

int easel_input_changed(const void *position) {
    mapping *slot = slot_holding((uintptr_t)position, 1);
    return slot ? atomic_load(&slot->changed) : 0;
}

int easel_input_is_mapped(const void *position) { return slot_holding((uintptr_t)position, 1) != NULL; }

void easel_input_release(const void *position) {
    mapping *slot = slot_holding((uintptr_t)position, 1);
    if (!slot) return;
    uintptr_t upto = (uintptr_t)position & ~(page_size - 1);
    uintptr_t kept = atomic_load(&slot->kept);
    if (upto < kept + RELEASE_STEP) return;
    /* One caller hands back each range (two decodes of one file may race here). */
    if (atomic_compare_exchange_strong(&slot->kept, &kept, upto)) madvise((void *)kept, upto - kept, MADV_DONTNEED);
}

void easel_input_release_range(const void *from, size_t length) {
    if (length < page_size) return;
    mapping *slot = slot_holding((uintptr_t)from, 0);
    if (!slot) return;
    uintptr_t start = (uintptr_t)from & ~(page_size - 1);
    uintptr_t end = (uintptr_t)from + length;
    uintptr_t mapping_end = atomic_load(&slot->end);
    end = (end < mapping_end ? end : mapping_end) + page_size - 1;
    end &= ~(page_size - 1);
    madvise((void *)start, end - start, MADV_DONTNEED);
}
