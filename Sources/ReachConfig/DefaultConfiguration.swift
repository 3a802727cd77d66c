/// The configuration reachd runs with when given none: the text of `config/reachd.yaml`,
/// compiled in so that the binary alone is enough. A test keeps the two identical.
enum DefaultConfiguration {
    static let yaml = #"""
        # reachd configuration
        #
        # reachd answers one question: can this machine reach its server right now?
        # It watches the network links and polls the server's health endpoint, and
        # publishes one verdict: connected only when a link is usable AND the server
        # answers healthy. Every verdict carries its reason.
        #
        # As shipped, reachd watches a health endpoint on this very machine,
        # http://127.0.0.1:8080/api/v1/health, so it works without internet access:
        # with nothing listening there it reports
        #     disconnected: connection_refused (target server)
        # and as soon as something answers 2xx on that path it reports "connected".
        # To watch your own server, set server.base_url (and server.health_path if it
        # is not /api/v1/health).
        #
        # Check a file:   reachd --check-config /path/to/reachd.yaml
        # Durations take a unit: 250ms, 1s, 1m30s.

        # The one-server shorthand: an HTTP target named "server" that GETs
        # base_url + health_path and expects a 2xx answer. It takes the same HTTP
        # options as an http target below (expect, headers, bearer_token_file,
        # bearer_token_credential, tls, address_family).
        server:
          base_url: http://127.0.0.1:8080
          health_path: /api/v1/health

        # Defaults for every target; each target may override them.
        probe:
          interval: 1s              # how often each target is probed
          timeout: 2s               # hard deadline for one probe, connect to last body byte
          failures_before_down: 1   # consecutive failures before a healthy target counts as down
          successes_before_up: 1    # consecutive successes before a down target counts as up
          address_family: auto      # auto (both, first to answer), ipv4 or ipv6
          coalesce: 50ms            # ticks of targets this close share one wake-up (0s: each its own);
                                    # a setting for all targets, not one a target overrides
          per_interface: false      # with two or more uplinks, also probe each target out of each
                                    # one (SO_BINDTODEVICE): the status's "interfaces"; the verdict
                                    # still follows the routes. A setting for all targets.

        # More targets, each with a unique name and a kind: http, tcp, grpc, dns or icmp.
        # targets:
        #   - name: api
        #     kind: http
        #     url: https://api.example.com/healthz
        #     interval: 1s
        #     timeout: 2s
        #     expect:
        #       status: [200, 204]        # or "2xx", or "200-299"; default 200-299
        #       body_contains: ok         # or, instead:
        #       # json: { pointer: /status, equals: ok }
        #     headers: { X-Probe: reachd }
        #     bearer_token_file: /etc/reachd/api-token    # or, under systemd LoadCredential=api-token:...:
        #     # bearer_token_credential: api-token        #   read from $CREDENTIALS_DIRECTORY/api-token
        #     tls:
        #       ca_file: /etc/reachd/private-ca.pem       # trust a private CA (default: the system store)
        #       server_name: api.internal                 # SNI and certificate name, when not the URL's host
        #   - name: database
        #     kind: tcp
        #     address: db.internal:5432
        #   - name: backend
        #     kind: grpc
        #     address: 10.0.0.5:50051
        #     service: ""                 # grpc.health.v1 service name; "" asks about the whole server
        #     watch: true                 # also hold Health/Watch open: changes and deaths seen in milliseconds
        #     failures_before_down: 3     # damp a flaky path: three failures in a row before "down"
        #   - name: resolver
        #     kind: dns
        #     query: api.example.com
        #     type: A                     # A, AAAA, CNAME, MX, TXT, SRV, NS, SOA, PTR
        #     server: 10.0.0.53:53        # default: the resolvers this host uses (behind systemd-resolved, its links' servers)
        #     transport: udp              # udp (default, TCP when truncated), tcp
        #     expect: { rcode: NOERROR, answer_contains: 192.0.2.10 }
        #   - name: gateway-ping
        #     kind: icmp
        #     host: 10.0.0.1              # or a name
        #     packets: 5                  # echoes per probe, spread over the interval; needs reachd's group in
        #                                 # net.ipv4.ping_group_range (systemd opens it to all), else not_permitted

        # Quality, beside the verdict: how well a connected target answers. Slow is not
        # down: the verdict stays connected, and its quality says "impaired" (where, and
        # how bad) once a measure over the window is past its budget at 3 evaluations in
        # a row, "good" again after 5 in a row under 0.7 x the budget. These budgets are
        # far above a clean line's, loaded machine or not. A target may override any key,
        # or say "quality: off"; without this section, no target has a quality.
        quality:
          latency: 500ms            # the window's median request time (HTTP, TCP, gRPC)
          loss: 10%                 # the window's share of failed probes
          jitter: 100ms             # the window's mean jitter of ICMP echo bursts
          window: 30s               # how far back the measures look (3 probes at the least)

        # How the targets' health combines: all, any, or { quorum: 2 }.
        policy: all

        # Which network interfaces count toward a usable link (shell globs; exclude
        # wins over include). The default exclude list is container and VM plumbing;
        # setting exclude replaces it, and "exclude: []" excludes nothing.
        interfaces:
          include: ["*"]
          exclude: [docker*, br-*, veth*, virbr*, vnet*, lxcbr*, lxdbr*, cni*, flannel*, cali*, podman*, kube-*]
          settle_window: 100ms      # link gains and route churn settle this long; a lost link counts at once

        # Hooks: executables run on every transition, one after another in lexical
        # order, like NetworkManager's dispatcher scripts. The directories are read
        # again for each transition (no restart needed). A hook must be a regular
        # executable file owned by root, not writable by group or others, and not
        # setuid; any other file is refused with a log line. Each gets PATH and
        # REACHD_STATE, REACHD_PREVIOUS_STATE, REACHD_REASON, REACHD_FAULT,
        # REACHD_INTERFACE, REACHD_SEQUENCE, REACHD_SINCE; its output lines go to reachd's log.
        # hooks:
        #   restored_dir: /etc/reachd/restored.d   # run on disconnected -> connected (the default)
        #   lost_dir: /etc/reachd/lost.d           # run on connected -> disconnected (the default)
        #   timeout: 30s                           # then SIGTERM to the hook's process group,
        #   kill_grace: 5s                         #   and SIGKILL this long after

        # Webhooks: each transition's JSON (the document /v1/events sends) is POSTed,
        # retried with backoff until a 2xx answer, or given up after give_up_after.
        # webhooks:
        #   - name: ops
        #     url: https://ops.example.com/hooks/reachd
        #     events: [restored, lost]                    # the default: both
        #     secret_file: /etc/reachd/ops-webhook.secret  # signs the body: X-Reachd-Signature: sha256=<hex>
        #     # secret_credential: ops-webhook            # or $CREDENTIALS_DIRECTORY/ops-webhook (LoadCredential=)
        #     timeout: 10s                                # one attempt, connect to answer
        #     give_up_after: 5m                           # then the event is given up, logged and counted

        # Captive portals (hotel and airport Wi-Fi). The network's own RFC 8908 API is asked whenever
        # the network advertises one (systemd-networkd records it). A check URL is off by default, so
        # that reachd contacts no host you did not name; with one, a portal's login page can never pass
        # for the server. Public ones, for example:
        # captive_portal:
        #   check_url: http://connectivitycheck.gstatic.com/generate_204   # Android's
        #   expect_status: 204
        #   # check_url: http://nmcheck.gnome.org/check_network_status.txt  # NetworkManager's
        #   # expect_body: NetworkManager is online
        #   warn_before: 5m        # warn this long before a portal's session ends (when its API says)
        # tls:
        #   warn_before: 14d       # warn daily when a target's certificate expires within this

        # History: every transition and, per target and minute, probes, failures and
        # latency, kept across restarts in SQLite (reachctl history, GET /v1/history,
        # reachd_uptime_ratio). The default file is $STATE_DIRECTORY/history.sqlite under
        # the unit (StateDirectory=reachd), else /var/lib/reachd/history.sqlite when that
        # directory exists; without either, history is off and the log says so.
        # history:
        #   enabled: true
        #   path: /var/lib/reachd/history.sqlite   # its directory is created if need be
        #   retention: 90d                         # older rows are deleted
        #   max_size: 256MiB                       # past it the oldest minutes, then transitions, go

        # Whose fault (the verdict's "fault": link, gateway, dns, upstream, server or
        # portal). While a target fails without an answer, reachd asks the default
        # gateway (ICMP echo over an unprivileged ping socket, where
        # net.ipv4.ping_group_range includes reachd's group) and an upstream reference
        # beyond it, to tell "your router", "the internet connection" and "the server"
        # apart. Nothing is sent while all is well.
        # upstream:
        #   check: resolver        # the system's resolver, TCP port 53, unless it is loopback or on a
        #                          # directly connected network (the default); or tcp://HOST:PORT; or none

        # Where the status endpoint listens. Loopback only by default.
        listen: 127.0.0.1:9780
        # api:
        #   bearer_token_file: /etc/reachd/api-token   # every request but /healthz must send it; required
        #                                              # when listen is not loopback
        #   idle_timeout: 60s                          # close a connection that sends nothing this long

        log:
          target: auto              # journald (under systemd, or when it answers), else logfmt on stderr
          level: info               # trace, debug, info, notice, warning, error, critical
        """#
}
