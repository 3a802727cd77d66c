#define _GNU_SOURCE
#include <pthread.h>
#include <spawn.h>
#include <sys/eventfd.h>
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
