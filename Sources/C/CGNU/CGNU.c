#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "CGNU.h"

int dedicated_thread_eventfd(void) {
    return eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
}

int dedicated_thread_name_current(const char *name) {
    return pthread_setname_np(pthread_self(), name);
}

int spawn_file_actions_add_close_from(void *actions, int from) {
    return posix_spawn_file_actions_addclosefrom_np(actions, from);
}

int spawn_file_actions_add_chdir(void *actions, const char *path) {
    return posix_spawn_file_actions_addchdir_np(actions, path);
}

int spawn_pipe(int fds[2]) {
    return pipe2(fds, O_CLOEXEC);
}

int spawn_pidfd_open(int pid) {
    return (int)syscall(SYS_pidfd_open, pid, 0);
}
