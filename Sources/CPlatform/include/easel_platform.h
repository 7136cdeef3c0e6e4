#ifndef EASEL_PLATFORM_H
#define EASEL_PLATFORM_H

#include <spawn.h>

/* The few Linux calls Swift's Glibc module does not show (they need _GNU_SOURCE), for
 * EaselSupport's platform layer: pipes made close-on-exec atomically, leaving the network
 * namespace, and the CPU time a process has used. */

/* pipe2(fds, O_CLOEXEC). Returns 0, or -1 with errno set. */
int easel_pipe_cloexec(int fds[2]);

/* unshare(CLONE_NEWNET), else unshare(CLONE_NEWUSER | CLONE_NEWNET). Returns 0 when the process
 * is now in a network namespace of its own, -1 otherwise (not privileged, or not allowed). */
int easel_leave_network(void);

/* Whole CPU seconds (user + system) this process has used, rounded up. */
long easel_cpu_seconds_used(void);

/* Lets this process use `more_seconds` more CPU seconds from now (RLIMIT_CPU's soft limit, within
 * its hard limit): past them the kernel sends SIGXCPU. Returns 0, or -1 with errno set. */
int easel_limit_cpu(long more_seconds);

/* Whether this process runs under ThreadSanitizer or AddressSanitizer (their runtimes reserve
 * terabytes of address space, so RLIMIT_AS cannot bound them). */
int easel_is_sanitized(void);

/* Aborts the process as soon as its resident memory passes `bytes` (a thread checks every 10 ms):
 * the memory limit of a sanitized worker, where RLIMIT_AS cannot be used. Returns 0 or -1. */
int easel_watch_resident_memory(long bytes);

/* Closes every descriptor from `from` up in the child a posix_spawn starts (glibc 2.34's
 * posix_spawn_file_actions_addclosefrom_np): a worker inherits nothing of its parent's but its
 * standard streams, even a descriptor some library opened without close-on-exec. */
int easel_spawn_close_from(posix_spawn_file_actions_t *actions, int from);

/* Spawn attributes that give the child an empty signal mask and every signal's default action
 * (a thread of a concurrency pool blocks most signals, SIGXCPU among them, and this process
 * ignores SIGPIPE: a child must not inherit either). Returns 0 or -1. */
int easel_spawnattr_clean(posix_spawnattr_t *attributes);

/* For a worker, first thing: no signal blocked, and SIGKILL when its parent dies (so a worker
 * never outlives the server that started it; it exits at once if the parent is already gone). */
void easel_worker_signals(void);

/* The program's GNU build ID (its NT_GNU_BUILD_ID note, which `make` sets to the commit it builds,
 * see scripts/build-id.sh): copies up to `capacity` bytes into `out` and returns the note's
 * length, or 0 when the program has none. */
int easel_build_id(unsigned char *out, int capacity);

/* Ignores SIGINT, SIGTERM and SIGHUP (the log relay ends with its input, after the server). */
void easel_ignore_termination_signals(void);

#endif
