#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include "CNetlink.h"

int cnetlink_enter_network_namespace(int fd) {
    return setns(fd, CLONE_NEWNET);
}
