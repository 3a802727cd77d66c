#ifndef C_DEDICATED_THREAD_H
#define C_DEDICATED_THREAD_H

/// `eventfd` and `pthread_setname_np` need _GNU_SOURCE or headers that Swift's Glibc module leaves out.

/// A non-blocking, close-on-exec eventfd: a dedicated thread's shutdown doorbell.
int dedicated_thread_eventfd(void);

/// Names the calling thread (shown by `top -H`, gdb, /proc/PID/task/TID/comm); at most 15 bytes.
int dedicated_thread_name_current(const char *name);

#endif
