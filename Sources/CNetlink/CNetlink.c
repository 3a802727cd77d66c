#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <sys/eventfd.h>
#include "CNetlink.h"

int cnetlink_enter_network_namespace(int fd) {
    return setns(fd, CLONE_NEWNET);
}

int cnetlink_eventfd(void) {
    return eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
}

int cnetlink_name_current_thread(const char *name) {
    return pthread_setname_np(pthread_self(), name);
}
