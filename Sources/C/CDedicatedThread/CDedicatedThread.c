#define _GNU_SOURCE
#include <pthread.h>
#include <sys/eventfd.h>
#include "CDedicatedThread.h"

int dedicated_thread_eventfd(void) {
    return eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
}

int dedicated_thread_name_current(const char *name) {
    return pthread_setname_np(pthread_self(), name);
}
