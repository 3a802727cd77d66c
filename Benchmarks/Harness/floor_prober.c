/* floor_prober: the least work an HTTP health poller can do on Linux; the benchmarks' yardstick.
 *
 * Method (the same work reachd does per probe, with nothing else):
 *   - one thread, one epoll instance, no allocation once the targets are read;
 *   - every target gets a fresh TCP connection each interval: non-blocking connect, one
 *     "GET path HTTP/1.1" with Connection: close, read to EOF, a 2xx status line is success,
 *     close with RST (SO_LINGER 0, as reachd's probes do, so no TIME_WAIT piles up);
 *   - phases are spread evenly over the interval and then rounded down to a coalescing window, as
 *     reachd's `probe.coalesce` (default 50 ms) does: targets close in phase share one wake-up.
 *     There are max(INTERVAL/COALESCE, ceil(N/10)) windows an interval, so a window holds at most
 *     about 10 targets; COALESCE_MS=0 gives every target a phase of its own;
 *   - a probe still open at its deadline (TIMEOUT_MS) is closed and counted as a timeout; a tick
 *     that finds the previous probe of its target still open is skipped;
 *   - nothing is logged per probe; counters and rusage go to stderr at exit (SIGTERM/SIGINT).
 *
 *   cc -O2 -o floor_prober floor_prober.c
 *   floor_prober TARGETS_FILE [INTERVAL_MS=1000] [TIMEOUT_MS=2000] [COALESCE_MS=50]
 *
 * TARGETS_FILE: one URL a line, http://IPV4:PORT/path (a literal IPv4 address: a yardstick, not a
 * product); other lines are ignored.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { HEAD_KEPT = 12 }; /* "HTTP/1.1 200" is all a verdict needs */

struct probe_target {
    struct sockaddr_in address;
    char request[300];
    int request_length;
    int fd;                 /* -1 while no probe is open */
    int request_sent;
    int64_t due_ms;         /* the next tick */
    int64_t deadline_ms;    /* of the open probe */
    char head[HEAD_KEPT];
    int head_length;
};

static volatile sig_atomic_t stopping;
static void request_stop(int signal_number) { (void)signal_number; stopping = 1; }

static unsigned long succeeded, failed, timed_out, skipped;

static int64_t monotonic_ms(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

/* Parses "http://A.B.C.D:PORT/path"; returns 0 on success. */
static int parse_url(const char *line, struct probe_target *target) {
    const char *prefix = "http://";
    if (strncmp(line, prefix, strlen(prefix)) != 0) return -1;
    const char *host = line + strlen(prefix);
    const char *colon = strchr(host, ':');
    if (!colon || colon - host >= 16) return -1;
    char address[16];
    memcpy(address, host, (size_t)(colon - host));
    address[colon - host] = '\0';
    char *after_port;
    long port = strtol(colon + 1, &after_port, 10);
    if (port <= 0 || port > 65535) return -1;
    char path[200] = "/";
    if (*after_port == '/') {
        size_t length = strcspn(after_port, " \t\r\n");
        if (length >= sizeof path) return -1;
        memcpy(path, after_port, length);
        path[length] = '\0';
    }
    memset(&target->address, 0, sizeof target->address);
    target->address.sin_family = AF_INET;
    target->address.sin_port = htons((uint16_t)port);
    if (inet_pton(AF_INET, address, &target->address.sin_addr) != 1) return -1;
    target->request_length = snprintf(target->request, sizeof target->request,
                                      "GET %s HTTP/1.1\r\nHost: %s:%ld\r\nUser-Agent: floor_prober\r\nConnection: close\r\n\r\n",
                                      path, address, port);
    target->fd = -1;
    return 0;
}

static void close_probe(int epoll_fd, struct probe_target *target) {
    epoll_ctl(epoll_fd, EPOLL_CTL_DEL, target->fd, NULL);
    close(target->fd);
    target->fd = -1;
}

static void start_probe(int epoll_fd, struct probe_target *target, uint32_t index, int64_t now, int timeout_ms) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) { failed++; return; }
    struct linger reset = {.l_onoff = 1, .l_linger = 0};
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, sizeof reset);
    if (connect(fd, (struct sockaddr *)&target->address, sizeof target->address) < 0 && errno != EINPROGRESS) {
        close(fd);
        failed++;
        return;
    }
    target->fd = fd;
    target->request_sent = 0;
    target->head_length = 0;
    target->deadline_ms = now + timeout_ms;
    struct epoll_event interest = {.events = EPOLLOUT | EPOLLIN | EPOLLRDHUP, .data.u32 = index};
    epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &interest);
}

/* Handles readiness of one open probe. */
static void advance_probe(int epoll_fd, struct probe_target *target, uint32_t index, uint32_t events) {
    static char scratch[4096];
    if (!target->request_sent) {
        if (!(events & EPOLLOUT)) {
            if (events & (EPOLLERR | EPOLLHUP)) { close_probe(epoll_fd, target); failed++; }
            return;
        }
        int error = 0;
        socklen_t length = sizeof error;
        getsockopt(target->fd, SOL_SOCKET, SO_ERROR, &error, &length);
        if (error || send(target->fd, target->request, (size_t)target->request_length, MSG_NOSIGNAL) != target->request_length) {
            close_probe(epoll_fd, target);
            failed++;
            return;
        }
        target->request_sent = 1;
        struct epoll_event interest = {.events = EPOLLIN | EPOLLRDHUP, .data.u32 = index};
        epoll_ctl(epoll_fd, EPOLL_CTL_MOD, target->fd, &interest);
        return;
    }
    for (;;) {
        ssize_t count = recv(target->fd, scratch, sizeof scratch, 0);
        if (count > 0) {
            int room = HEAD_KEPT - target->head_length;
            int take = count < room ? (int)count : room;
            memcpy(target->head + target->head_length, scratch, (size_t)take);
            target->head_length += take;
            continue;
        }
        if (count == 0) {
            /* EOF: the status line decides. */
            int ok = target->head_length >= 10 && memcmp(target->head, "HTTP/1.", 7) == 0 && target->head[9] == '2';
            close_probe(epoll_fd, target);
            if (ok) succeeded++; else failed++;
        } else if (errno != EAGAIN && errno != EINTR) {
            close_probe(epoll_fd, target);
            failed++;
        }
        return;
    }
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s TARGETS_FILE [INTERVAL_MS=1000] [TIMEOUT_MS=2000] [COALESCE_MS=50]\n", argv[0]);
        return 64;
    }
    int interval_ms = argc > 2 ? atoi(argv[2]) : 1000;
    int timeout_ms = argc > 3 ? atoi(argv[3]) : 2000;
    int coalesce_ms = argc > 4 ? atoi(argv[4]) : 50;
    if (interval_ms <= 0 || timeout_ms <= 0 || coalesce_ms < 0) { fprintf(stderr, "floor_prober: bad arguments\n"); return 64; }

    FILE *file = fopen(argv[1], "r");
    if (!file) { perror(argv[1]); return 66; }
    size_t capacity = 64, count = 0;
    struct probe_target *targets = calloc(capacity, sizeof *targets);
    char line[512];
    while (targets && fgets(line, sizeof line, file)) {
        if (count == capacity) {
            capacity *= 2;
            targets = realloc(targets, capacity * sizeof *targets);
            if (!targets) break;
        }
        if (parse_url(line, &targets[count]) == 0) count++;
    }
    fclose(file);
    if (!targets) { fprintf(stderr, "floor_prober: out of memory\n"); return 71; }
    if (count == 0) { fprintf(stderr, "floor_prober: no http://IPV4:PORT/path lines in %s\n", argv[1]); return 65; }

    /* Phases: target i starts at interval * i / count, rounded down to its coalescing window. */
    int64_t windows = coalesce_ms > 0 ? interval_ms / coalesce_ms : (int64_t)count;
    if (windows < ((int64_t)count + 9) / 10) windows = ((int64_t)count + 9) / 10;
    if (windows > (int64_t)count) windows = (int64_t)count;
    int64_t start = monotonic_ms();
    for (size_t i = 0; i < count; i++) {
        int64_t window = (int64_t)i * windows / (int64_t)count;
        targets[i].due_ms = start + (int64_t)interval_ms * window / windows;
    }

    signal(SIGTERM, request_stop);
    signal(SIGINT, request_stop);
    int epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    if (epoll_fd < 0) { perror("epoll_create1"); return 71; }
    struct epoll_event ready[256];
    size_t next = 0;            /* phases rise with the index, and every period repeats them */
    int64_t next_sweep = start; /* deadlines are looked for at most every 100 ms */
    while (!stopping) {
        int64_t now = monotonic_ms();
        while (targets[next].due_ms <= now) {
            struct probe_target *target = &targets[next];
            target->due_ms += interval_ms;
            if (target->fd >= 0) skipped++;
            else start_probe(epoll_fd, target, (uint32_t)next, now, timeout_ms);
            next = (next + 1) % count;
        }
        if (now >= next_sweep) {
            for (size_t i = 0; i < count; i++)
                if (targets[i].fd >= 0 && targets[i].deadline_ms <= now) { close_probe(epoll_fd, &targets[i]); timed_out++; }
            next_sweep = now + 100;
        }
        int64_t wait_ms = targets[next].due_ms - now;
        if (next_sweep - now < wait_ms) wait_ms = next_sweep - now;
        if (wait_ms < 0) wait_ms = 0;
        int events = epoll_wait(epoll_fd, ready, (int)(sizeof ready / sizeof ready[0]), (int)wait_ms);
        for (int e = 0; e < events; e++) {
            uint32_t index = ready[e].data.u32;
            if (targets[index].fd >= 0) advance_probe(epoll_fd, &targets[index], index, ready[e].events);
        }
    }

    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    double cpu = usage.ru_utime.tv_sec + usage.ru_utime.tv_usec / 1e6 + usage.ru_stime.tv_sec + usage.ru_stime.tv_usec / 1e6;
    unsigned long probes = succeeded + failed + timed_out;
    fprintf(stderr, "floor_prober: targets=%zu windows=%lld probes=%lu ok=%lu failed=%lu timeout=%lu skipped=%lu cpu_s=%.3f cpu_s_per_1k=%.4f maxrss_kib=%ld\n",
            count, (long long)windows, probes, succeeded, failed, timed_out, skipped, cpu, probes ? cpu * 1000 / probes : 0.0, usage.ru_maxrss);
    return 0;
}
