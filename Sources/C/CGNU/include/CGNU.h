#ifndef C_GNU_H
#define C_GNU_H

/// What needs _GNU_SOURCE, which Swift's Glibc module is built without.

/// A non-blocking, close-on-exec eventfd: a dedicated thread's shutdown doorbell.
int dedicated_thread_eventfd(void);

/// Names the calling thread (shown by `top -H`, gdb, /proc/PID/task/TID/comm); at most 15 bytes.
int dedicated_thread_name_current(const char *name);

/// `posix_spawn_file_actions_addclosefrom_np`: the child closes every descriptor from `from` on.
/// `actions` is a `posix_spawn_file_actions_t *` (spawn.h here would claim its types from Glibc's module).
int spawn_file_actions_add_close_from(void *actions, int from);

/// `posix_spawn_file_actions_addchdir_np`: the child changes to `path` before it runs the program.
int spawn_file_actions_add_chdir(void *actions, const char *path);

/// `pipe2(fds, O_CLOEXEC)`: a pipe no other thread's spawn can leak (both ends close-on-exec from the start).
int spawn_pipe(int fds[2]);

/// `pidfd_open`: a descriptor that polls readable once the process `pid` has exited.
int spawn_pidfd_open(int pid);

#endif
