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
/// `setns` needs _GNU_SOURCE, which Swift's Glibc module leaves out.
int cnetlink_enter_network_namespace(int fd);

#endif
