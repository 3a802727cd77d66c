#ifndef CNETLINK_H
#define CNETLINK_H

// Exposes the rtnetlink ABI that Glibc's Swift module lacks. Deliberately not included:
// <linux/if.h> and <linux/if_arp.h> (which pulls it in), both clash with glibc's <net/if.h>.
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/if_addr.h>
#include <linux/if_link.h>

/// `ARPHRD_*` device types from <linux/if_arp.h>, the few reachd distinguishes.
enum {
    CNETLINK_ARPHRD_ETHER = 1,
    CNETLINK_ARPHRD_LOOPBACK = 772,
};

/// `IFF_LOWER_UP` and `IFF_RUNNING`: glibc's <net/if.h> stops at 0x8000.
enum {
    CNETLINK_IFF_RUNNING = 0x40,
    CNETLINK_IFF_LOWER_UP = 0x10000,
};

/// Moves the calling thread into the network namespace behind `fd` (a /run/netns/NAME file).
/// `setns` and `eventfd` need _GNU_SOURCE or headers that Swift's Glibc module leaves out.
int cnetlink_enter_network_namespace(int fd);

/// A non-blocking, close-on-exec eventfd: the reader thread's shutdown doorbell.
int cnetlink_eventfd(void);

/// Names the calling thread (shown by `top -H`, gdb, /proc/PID/task/TID/comm); at most 15 bytes.
int cnetlink_name_current_thread(const char *name);

#endif
