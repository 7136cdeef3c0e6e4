#define _GNU_SOURCE
#include "easel_platform.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/resource.h>
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
