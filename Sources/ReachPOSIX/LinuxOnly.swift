// reachd and every ReachKit product are Linux programs: this module calls Glibc, eventfd and
// pthread_setname_np, and what stands on it reads netlink and sd-bus. A build anywhere else stops
// here, with the reason, rather than at the first missing symbol (Package.swift says the same).
#if !os(Linux)
#error("reachd and ReachKit build on Linux only: ReachPOSIX uses Glibc and eventfd")
#endif
