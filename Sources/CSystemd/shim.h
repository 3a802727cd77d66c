#include <sys/uio.h>
#include <systemd/sd-bus.h>

#include <pthread.h>
#include <sys/eventfd.h>

/// A non-blocking, close-on-exec eventfd: the bus thread's shutdown doorbell. `eventfd` is not in
/// Swift's Glibc module.
static inline int csystemd_eventfd(void) {
    return eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
}

/// `pthread_setname_np` is declared only under _GNU_SOURCE, which Swift's Glibc module leaves out.
extern int pthread_setname_np(pthread_t thread, const char *name);

/// Names the calling thread (shown by `top -H`, gdb, /proc/PID/task/TID/comm); at most 15 bytes.
static inline int csystemd_name_current_thread(const char *name) {
    return pthread_setname_np(pthread_self(), name);
}
