// swift-tools-version: 6.2
import PackageDescription

/// Our own code builds in Swift 6 language mode with every warning an error, and uses a module's
/// members only where a file imports it: what a file uses, it says (and the manifest test checks).
let strict: [SwiftSetting] = [
    .treatAllWarnings(as: .error),
    .enableUpcomingFeature("MemberImportVisibility"),
]

/// How reachd and reachctl are linked for release, for the memory and disk a host pays for (README,
/// "Memory"): not position-independent, so the loader writes no relocations into their Swift
/// metadata and those pages stay shared and clean (as Go links blackbox_exporter); and no dynamic
/// symbol table for their own symbols, which `-static-stdlib` would otherwise export (for reachd
/// 3.6 MB of relocations and 1.3 MB of symbols read at start; for reachctl 2.8 MB of its 22.6); and
/// gold's safe identical code folding, which keeps one copy of functions that compile to the same
/// bytes (generic specialisations, mostly) unless their address is taken: reachd 0.60 MB less,
/// reachctl 0.20 MB (docs/performance.md, "Size").
/// Build them with `--static-swift-stdlib` (scripts/run does), so that only the parts of the Swift
/// runtime and FoundationEssentials they use are linked.
let releaseLinking: [LinkerSetting] = [
    .unsafeFlags(
        ["-Xclang-linker", "-no-pie", "-Xlinker", "--no-export-dynamic", "-Xlinker", "--icf=safe"],
        .when(platforms: [.linux], configuration: .release)
    )
]

let package = Package(
    name: "reachd",
    // Linux only: ReachPOSIX, which every product stands on, uses Glibc, eventfd and named threads,
    // and a build elsewhere stops at its LinuxOnly.swift. This line only states the least macOS of
    // the Swift APIs used (Synchronization's Mutex); nothing is built or tested on macOS.
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "reachd", targets: ["reachd"]),
        .executable(name: "reachctl", targets: ["reachctl"]),
        // What a program imports: ReachKit, ReachKitQueue for the durable queue, ReachKitEmbedded
        // for the in-process monitor, and ReachKitTesting for its tests. The modules behind them are
        // not products of their own.
        .library(name: "ReachKit", targets: ["ReachKit"]),
        .library(name: "ReachKitQueue", targets: ["ReachKitQueue"]),
        .library(name: "ReachKitEmbedded", targets: ["ReachKitEmbedded"]),
        .library(name: "ReachKitTesting", targets: ["ReachKitTesting"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.0"),
        .package(url: "https://github.com/apple/swift-collections.git", from: "1.1.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.6.0"),
        // Only for yams-oracle: ReachConfigTests hold the YAML reader to Yams, which it replaced.
        .package(url: "https://github.com/jpsim/Yams.git", from: "6.0.0"),
        .package(url: "https://github.com/x-sheep/swift-property-based.git", from: "2.0.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.0"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/grpc/grpc-swift-2.git", from: "2.4.0"),
        .package(url: "https://github.com/grpc/grpc-swift-nio-transport.git", from: "2.9.0"),
        .package(url: "https://github.com/grpc/grpc-swift-protobuf.git", from: "2.4.0"),
        // No traits: Hummingbird's default `FullFoundation` links the full Foundation, and with it ICU,
        // for its URL-encoded form coders' date formats, and `ConfigurationSupport` swift-configuration;
        // swift-protobuf's `BinaryDelimitedStreams` reads Foundation's streams. reachd uses none of
        // them, and SwiftPM unions a package's traits across the graph (grpc-swift-protobuf #101).
        .package(url: "https://github.com/apple/swift-protobuf.git", from: "1.39.0", traits: []),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.0", traits: []),
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth.git", from: "2.5.0"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.0"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.0"..<"5.0.0"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
    ],
    targets: [
        // MARK: The pure core and the wire contract

        // The small helpers every module shares, each written once and free of reachd's domain: the
        // deadline race, durations, globs, http(s) URLs, host:port, IP addresses, string helpers,
        // broadcast and subscription, clocks, dates (RFC 3339, HTTP), backoff, secrets. No I/O.
        .target(
            name: "ReachSupport",
            dependencies: [.product(name: "DequeModule", package: "swift-collections")],
            swiftSettings: strict
        ),
        // The pure core, a folder per concern: Settings (the engine's), Model (the verdict and its
        // parts), Targets, Rules (combining, policy, transitions), Monitor (monitor, hub, immediate
        // check), Probing (probe schedule, scheduler) and Reactions (callback registry).
        // No I/O: driven by an injected clock and fed by adapters.
        .target(
            name: "ReachCore",
            dependencies: [
                "ReachSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "HeapModule", package: "swift-collections"),
            ],
            swiftSettings: strict
        ),
        // The one wire contract every side shares: the status document and event data, SSE framing,
        // the reason codes and their words, the API's version and paths. No networking.
        .target(
            name: "ReachAPI",
            dependencies: ["ReachCore", "ReachSupport"],
            exclude: ["openapi.yaml"],
            swiftSettings: strict
        ),

        // MARK: System calls and C

        // C shims for what Glibc's module lacks: the GNU extensions (a named thread, an eventfd, closing
        // descriptors in a spawned child), the rtnetlink ABI, libsystemd.
        .target(name: "CGNU", path: "Sources/C/CGNU"),
        .target(name: "CNetlink", path: "Sources/C/CNetlink"),
        // The system's OpenSSL (libssl), for the status API client's HTTPS: reachctl must not link
        // BoringSSL (NIOSSL) for the few requests it makes, and every host has libssl already.
        .systemLibrary(
            name: "COpenSSL",
            path: "Sources/C/COpenSSL",
            pkgConfig: "openssl",
            providers: [.apt(["libssl-dev"])]
        ),
        // The system's libyaml, which the configuration reader composes its nodes from (Yams wraps a
        // copy of it, but imports the full Foundation, and with it ICU, in every file).
        .systemLibrary(
            name: "CYAML",
            path: "Sources/C/CYAML",
            pkgConfig: "yaml-0.1",
            providers: [.apt(["libyaml-dev"])]
        ),
        .systemLibrary(
            name: "CSystemd",
            path: "Sources/C/CSystemd",
            pkgConfig: "libsystemd",
            providers: [.apt(["libsystemd-dev"])]
        ),
        // Thin POSIX helpers every adapter shares: a dedicated thread with a shutdown doorbell, the
        // errno error, a bounded file reader, the system clocks. Below the core: helpers only.
        .target(name: "ReachPOSIX", dependencies: ["ReachSupport", "CGNU"], swiftSettings: strict),

        // MARK: Adapters

        // The rtnetlink link source: complete link snapshots for the core, event driven.
        .target(
            name: "ReachLink",
            dependencies: [
                "ReachCore", "ReachSupport", "ReachPOSIX", "CNetlink", .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        // grpc.health.v1 messages and service stubs, generated from health.proto and committed.
        .target(
            name: "GRPCHealthProto",
            dependencies: [
                .product(name: "GRPCCore", package: "grpc-swift-2"),
                .product(name: "GRPCProtobuf", package: "grpc-swift-protobuf"),
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            ],
            exclude: ["health.proto"]
        ),
        // What outgoing connections on SwiftNIO share: a socket sent out of one interface only
        // (SO_BINDTODEVICE), client TLS contexts made once per CA bundle.
        .target(
            name: "ReachOutbound",
            dependencies: [
                "ReachPOSIX",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: strict
        ),
        // The network's captive-portal API (RFC 8908), found the RFC 8910 way (networkd's link state).
        .target(
            name: "ReachCaptivePortal",
            dependencies: [
                "ReachCore", "ReachSupport",
                "ReachPOSIX",
                "ReachOutbound",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: strict
        ),
        // Health probes: HTTP(S), TCP connect, gRPC health and DNS on SwiftNIO; ICMP echo bursts on
        // a thread of their own (its timer heap from swift-collections).
        .target(
            name: "ReachProbes",
            dependencies: [
                "ReachCore", "ReachSupport",
                "ReachPOSIX",
                "ReachOutbound",
                "GRPCHealthProto",
                .product(name: "HeapModule", package: "swift-collections"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "GRPCCore", package: "grpc-swift-2"),
                .product(name: "GRPCNIOTransportHTTP2", package: "grpc-swift-nio-transport"),
                .product(name: "GRPCProtobuf", package: "grpc-swift-protobuf"),
            ],
            swiftSettings: strict
        ),
        // sd-bus: connections to the session and system bus, messages, errors.
        .target(
            name: "ReachBus",
            dependencies: ["CSystemd", "ReachPOSIX"],
            swiftSettings: strict
        ),
        // systemd's service manager and logind: sd_notify (readiness, status, watchdog) and the sleep signal.
        .target(
            name: "ReachSystemd",
            dependencies: ["ReachBus", "ReachPOSIX", .product(name: "Logging", package: "swift-log")],
            swiftSettings: strict
        ),
        // Log handlers: structured journald entries and logfmt lines, and what they share.
        .target(
            name: "ReachLogging",
            dependencies: [
                "ReachCore", "ReachSupport", "ReachPOSIX", "CSystemd",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        // Desktop notifications: the policy, the wording, the notifier on the session bus, and the
        // agent that follows reachd's event stream for a person's session.
        .target(
            name: "ReachNotifications",
            dependencies: [
                "ReachCore", "ReachSupport", "ReachAPI", "ReachClient", "ReachBus", "ReachPOSIX",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        // reachd's Prometheus metrics.
        .target(
            name: "ReachMetrics",
            dependencies: [
                "ReachCore", "ReachSupport", .product(name: "Logging", package: "swift-log"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            swiftSettings: strict
        ),
        // The status page: HTML rendered from the status and history documents, its style sheet and script.
        .target(
            name: "ReachStatusPage",
            dependencies: ["ReachCore", "ReachSupport", "ReachAPI"],
            swiftSettings: strict
        ),
        // The status API's HTTP server (Hummingbird): JSON status, Server-Sent Events, checks, liveness, /metrics.
        .target(
            name: "ReachServer",
            dependencies: [
                "ReachCore", "ReachSupport",
                "ReachAPI",
                "ReachStatusPage",
                "ReachMetrics",
                "ReachPOSIX",
                "ReachConfig",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdBcrypt", package: "hummingbird-auth"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),
        // The gRPC face of the verdict: grpc.health.v1.Health (Check, Watch, List).
        .target(
            name: "ReachGRPCServer",
            dependencies: [
                "ReachCore", "ReachSupport",
                "GRPCHealthProto",
                "ReachPOSIX",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "GRPCCore", package: "grpc-swift-2"),
                .product(name: "GRPCNIOTransportHTTP2", package: "grpc-swift-nio-transport"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),
        // Hook scripts and signed webhooks: restoration work for the programs that own it.
        .target(
            name: "ReachHooks",
            dependencies: [
                "ReachCore", "ReachSupport",
                "ReachAPI",
                "ReachConfig",
                "ReachPOSIX",
                "ReachOutbound",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),
        // reachd's history: transitions and per-minute probe rollups in SQLite, across restarts. On
        // the system's SQLite directly (GRDBSQLite is only its module map): GRDB imports the full
        // Foundation, and with it ICU.
        .target(
            name: "ReachHistory",
            dependencies: [
                "ReachCore", "ReachSupport", "ReachAPI", "ReachConfig", "ReachPOSIX",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ],
            swiftSettings: strict
        ),
        // YAML configuration: parsing (libyaml), validation, the embedded default.
        .target(
            name: "ReachConfig",
            dependencies: [
                "ReachCore", "ReachSupport", "ReachPOSIX", "CYAML", .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),

        // MARK: The engine

        // The verdict machinery assembled once from a configuration: monitor, link source, probe
        // schedulers, captive-portal API, path evidence, certificate warnings, sleep. reachd and
        // EmbeddedService both run it, so a program is never told what reachd would not say.
        .target(
            name: "ReachEngine",
            dependencies: [
                "ReachCore", "ReachSupport",
                "ReachPOSIX",
                "ReachConfig",
                "ReachLink",
                "ReachProbes",
                "ReachSystemd",
                "ReachCaptivePortal",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),

        // MARK: The daemon

        // The composition root: wires configuration, core and adapters into one service group.
        .target(
            name: "ReachDaemon",
            dependencies: [
                "ReachCore", "ReachSupport",
                "ReachAPI",
                "ReachPOSIX",
                "ReachConfig",
                "ReachEngine",
                "ReachSystemd",
                "ReachLogging",
                "ReachMetrics",
                "ReachServer",
                "ReachGRPCServer",
                "ReachHooks",
                "ReachHistory",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "reachd",
            dependencies: [
                "ReachDaemon",
                "ReachConfig",
                "ReachCore",
                "ReachLogging",
                "ReachPOSIX",
                "ReachSystemd",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strict,
            linkerSettings: releaseLinking
        ),

        // MARK: Clients

        // The one client of the status API, on plain sockets: TCP or the unix socket, GET and POST,
        // a token, timeouts, TLS on the system's OpenSSL, the event stream with resume. No server,
        // no event loop, no HTTP client or TLS library.
        .target(
            name: "ReachClient",
            dependencies: ["COpenSSL", "ReachSupport", "ReachAPI", "ReachPOSIX"],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "reachctl",
            dependencies: [
                "ReachCore", "ReachSupport",
                "ReachAPI",
                "ReachClient",
                "ReachNotifications",
                "ReachPOSIX",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strict,
            linkerSettings: releaseLinking
        ),
        // The library for programs: the connectivity service backed by reachd, as a
        // swift-service-lifecycle service. Small on purpose: no server, no probers, no YAML, no TLS,
        // no database (an idle follower pays for what it links: docs/performance.md).
        .target(
            name: "ReachKit",
            dependencies: [
                "ReachCore", "ReachSupport",
                "ReachAPI",
                "ReachClient",
                "ReachPOSIX",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),
        // The durable queue that drains on restoration (SQLite through GRDB), apart from ReachKit so
        // that a program that only follows connectivity links no database.
        .target(
            name: "ReachKitQueue",
            dependencies: [
                "ReachKit", "ReachSupport", "ReachPOSIX",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),
        // The same service for hosts without reachd: the daemon's engine, in-process.
        .target(
            name: "ReachKitEmbedded",
            dependencies: [
                "ReachKit", "ReachCore", "ReachSupport", "ReachConfig", "ReachEngine", "ReachPOSIX",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),
        // For a program's tests: a connectivity service the test drives, with the real callback rule.
        .target(
            name: "ReachKitTesting",
            dependencies: [
                "ReachKit", "ReachCore", "ReachSupport", "ReachPOSIX",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),
        // Uses ReachKit as a program would, importing nothing else: a cache-warming callback and an upload queue.
        .executableTarget(
            name: "reachkit-example",
            dependencies: ["ReachKit", "ReachKitQueue", "ReachKitEmbedded"],
            path: "Examples/ReachKitExample",
            swiftSettings: strict
        ),
        // The embedded service in a process of its own, writing its verdicts as reachd's event
        // stream does: for the fault matrix's side-by-side test, run in a network namespace.
        .executableTarget(
            name: "embedded-verdicts-helper",
            dependencies: [
                "ReachKit", "ReachKitEmbedded", "ReachAPI", .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/EmbeddedVerdictsHelper",
            swiftSettings: strict
        ),
        // Drains a queue in a child process, for the test that kills it mid-drain.
        .executableTarget(
            name: "queue-drain-helper",
            dependencies: [
                "ReachKit", "ReachKitQueue", "ReachKitTesting", .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/QueueDrainHelper",
            swiftSettings: strict
        ),
        .testTarget(
            name: "ReachKitTests",
            dependencies: [
                "ReachKit", "ReachKitQueue", "ReachKitEmbedded", "ReachKitTesting", "ReachAPI", "ReachConfig",
                "ReachCore",
                "ReachSupport", "ReachTesting", "ReachTestRigs", "reachd", "queue-drain-helper",
                "reachkit-example",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "ServiceLifecycleTestKit", package: "swift-service-lifecycle"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "GRPCCore", package: "grpc-swift-2"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: strict
        ),
        // What the ReachKit benchmarks share: the queued item, timing, printing.
        .target(name: "ReachKitBenchmarkSupport", path: "Benchmarks/ReachKitBenchmarkSupport", swiftSettings: strict),
        // Prints durable enqueue throughput beside a bare SQLite loop: ReachKit and its queue alone, quick to build.
        .executableTarget(
            name: "reachkit-enqueue-benchmark",
            dependencies: [
                "ReachKit", "ReachKitQueue", "ReachKitBenchmarkSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ],
            path: "Benchmarks/ReachKitEnqueue",
            swiftSettings: strict
        ),
        // Prints drain throughput against a local HTTP server.
        .executableTarget(
            name: "reachkit-benchmark",
            dependencies: [
                "ReachKit", "ReachKitQueue", "ReachKitTesting", "ReachKitBenchmarkSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            path: "Benchmarks/ReachKit",
            swiftSettings: strict
        ),
        // An idle program following reachd with ReachKit alone: what it costs in memory.
        .executableTarget(
            name: "reachkit-idle-client",
            dependencies: ["ReachKit", .product(name: "Logging", package: "swift-log")],
            path: "Benchmarks/ReachKitIdleClient",
            swiftSettings: strict
        ),
        // Benchmarks print figures; they are not timed tests.
        .executableTarget(
            name: "config-load-benchmark",
            dependencies: ["ReachConfig"],
            path: "Benchmarks/ConfigLoad",
            swiftSettings: strict
        ),
        // What history's own work costs at N targets, apart from the rest of reachd (docs/performance.md).
        .executableTarget(
            name: "history-recording-benchmark",
            dependencies: [
                "ReachHistory", "ReachConfig", "ReachCore", "ReachSupport",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Benchmarks/HistoryRecording",
            swiftSettings: strict
        ),
        // MARK: Fuzzing (FuzzTesting/, scripts/fuzz, docs/reliability.md)

        // What each fuzz target feeds to which of our parsers of outside input, and the invariants
        // it checks: one function per target, shared by the fuzz executables and ReachFuzzingTests.
        .target(
            name: "ReachFuzzing",
            dependencies: [
                "ReachAPI", "ReachCaptivePortal", "ReachConfig", "ReachCore", "ReachSupport", "ReachLink",
                "ReachMetrics", "ReachPOSIX", "ReachProbes", "ReachServer",
                "GRPCHealthProto",
                .product(name: "GRPCCore", package: "grpc-swift-2"),
                .product(name: "GRPCProtobuf", package: "grpc-swift-protobuf"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            path: "FuzzTesting/Inputs",
            swiftSettings: strict
        ),
        // One libFuzzer executable per target: only `LLVMFuzzerTestOneInput`, calling ReachFuzzing.
        // scripts/fuzz builds them with `-sanitize=fuzzer,address -parse-as-library`; CFuzzerEntry
        // then stands in for the entry point SwiftPM links them with (fuzzer_entry.c says why).
        .target(name: "CFuzzerEntry", path: "FuzzTesting/CFuzzerEntry"),
        .executableTarget(
            name: "fuzz-netlink",
            dependencies: ["CFuzzerEntry", "ReachFuzzing"],
            path: "FuzzTesting/FuzzNetlink",
            swiftSettings: strict
        ),
        .executableTarget(
            name: "fuzz-config",
            dependencies: ["CFuzzerEntry", "ReachFuzzing"],
            path: "FuzzTesting/FuzzConfig",
            swiftSettings: strict
        ),
        .executableTarget(
            name: "fuzz-http-response",
            dependencies: ["CFuzzerEntry", "ReachFuzzing"],
            path: "FuzzTesting/FuzzHTTPResponse",
            swiftSettings: strict
        ),
        .executableTarget(
            name: "fuzz-grpc-health",
            dependencies: ["CFuzzerEntry", "ReachFuzzing"],
            path: "FuzzTesting/FuzzGRPCHealth",
            swiftSettings: strict
        ),
        .executableTarget(
            name: "fuzz-event-stream",
            dependencies: ["CFuzzerEntry", "ReachFuzzing"],
            path: "FuzzTesting/FuzzEventStream",
            swiftSettings: strict
        ),
        .executableTarget(
            name: "fuzz-captive-portal",
            dependencies: ["CFuzzerEntry", "ReachFuzzing"],
            path: "FuzzTesting/FuzzCaptivePortal",
            swiftSettings: strict
        ),
        .executableTarget(
            name: "fuzz-history-query",
            dependencies: ["CFuzzerEntry", "ReachFuzzing"],
            path: "FuzzTesting/FuzzHistoryQuery",
            swiftSettings: strict
        ),
        .executableTarget(
            name: "fuzz-documents",
            dependencies: ["CFuzzerEntry", "ReachFuzzing"],
            path: "FuzzTesting/FuzzDocuments",
            swiftSettings: strict
        ),
        .executableTarget(
            name: "fuzz-status-api",
            dependencies: ["CFuzzerEntry", "ReachFuzzing"],
            path: "FuzzTesting/FuzzStatusAPI",
            swiftSettings: strict
        ),
        .executableTarget(
            name: "fuzz-dns-message",
            dependencies: ["CFuzzerEntry", "ReachFuzzing"],
            path: "FuzzTesting/FuzzDNSMessage",
            swiftSettings: strict
        ),
        .executableTarget(
            name: "fuzz-http-response-reader",
            dependencies: ["CFuzzerEntry", "ReachFuzzing"],
            path: "FuzzTesting/FuzzHTTPResponseReader",
            swiftSettings: strict
        ),
        // Replays every committed corpus and crash input through the same functions, in `swift test`.
        .testTarget(
            name: "ReachFuzzingTests",
            dependencies: ["ReachFuzzing", "ReachTesting"],
            swiftSettings: strict
        ),
        // The fakes that surround the unit under test, pure: a manual clock, an in-memory link source,
        // the monitor harness, fixtures, captured logs, a gate, and the one way to wait (`waitUntil`).
        .target(
            name: "ReachTesting",
            dependencies: ["ReachCore", "ReachSupport", .product(name: "Logging", package: "swift-log")],
            path: "Tests/ReachTesting",
            swiftSettings: strict
        ),
        // The process rigs: child processes and the one way to start reachd (a private journal
        // included), network namespaces, the stand-in servers (HTTP, gRPC health, webhooks, a portal
        // API), a private CA, a desktop, a system bus with logind, Chromium, a small tmpfs to fill.
        .target(
            name: "ReachTestRigs",
            dependencies: ["ReachTesting", "ReachLogging", "ReachPOSIX", "CNetlink"],
            path: "Tests/ReachTestRigs",
            exclude: ["SystemBus", "Servers", "Clients"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "ReachSupportTests",
            dependencies: ["ReachSupport", "ReachTesting"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "ReachCoreTests",
            dependencies: [
                "ReachCore", "ReachSupport",
                "ReachTesting",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "ReachLinkTests",
            dependencies: [
                "ReachLink",
                "ReachCore", "ReachSupport",
                "ReachPOSIX",
                "ReachTesting", "ReachTestRigs",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "InMemoryLogging", package: "swift-log"),
            ],
            exclude: ["Fixtures/capture-netlink.py"],
            swiftSettings: strict
        ),
        // Prints link-loss and link-gain latency figures from a veth flapped in a namespace.
        .executableTarget(
            name: "link-flap-benchmark",
            dependencies: [
                "ReachLink", "ReachCore", "ReachSupport", "CNetlink", .product(name: "Logging", package: "swift-log"),
            ],
            path: "Benchmarks/LinkFlap",
            swiftSettings: strict
        ),
        .testTarget(
            name: "ReachCaptivePortalTests",
            dependencies: ["ReachCaptivePortal", "ReachCore", "ReachTesting", "ReachTestRigs"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "ReachProbesTests",
            dependencies: [
                "ReachProbes",
                "ReachCore", "ReachSupport",
                "ReachTesting", "ReachTestRigs",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            exclude: ["Fixtures"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "ReachSystemdTests",
            dependencies: [
                "ReachSystemd", "ReachCore", "ReachSupport", "ReachTesting", "ReachTestRigs",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "ReachNotificationsTests",
            dependencies: [
                "ReachNotifications", "ReachAPI", "ReachCore", "ReachSupport", "ReachTesting", "ReachTestRigs",
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "ReachLoggingTests",
            dependencies: ["ReachLogging", "ReachCore", .product(name: "Logging", package: "swift-log")],
            swiftSettings: strict
        ),
        .testTarget(
            name: "ReachAPITests",
            dependencies: ["ReachAPI", "ReachCore", "ReachSupport", "ReachTesting"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "ReachMetricsTests",
            dependencies: ["ReachMetrics", "ReachCore", "ReachSupport", "ReachTesting", "ReachTestRigs"],
            swiftSettings: strict
        ),
        // The repository itself: links in the documentation, the manifest against the imports, the
        // products' public API against PublicAPI/.
        .testTarget(
            name: "RepositoryTests",
            dependencies: ["ReachTesting", "ReachTestRigs"],
            exclude: ["PublicAPI"],
            swiftSettings: strict
        ),
        // Prints probe cost, tick lag and detection latency against real local servers.
        .executableTarget(
            name: "probe-benchmark",
            dependencies: [
                "ReachProbes", "ReachLink", "ReachCore", "ReachSupport",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Benchmarks/Probes",
            swiftSettings: strict
        ),
        // The page's renderer, and the page in a real Chromium against a real reachd.
        .testTarget(
            name: "ReachStatusPageTests",
            dependencies: [
                "ReachStatusPage", "ReachAPI", "ReachCore", "ReachSupport", "ReachTesting", "ReachTestRigs", "reachd",
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "ReachServerTests",
            dependencies: [
                "ReachServer",
                "ReachAPI",
                "ReachMetrics",
                "ReachCore", "ReachSupport",
                "ReachPOSIX",
                "ReachTesting", "ReachTestRigs",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            exclude: ["Clients"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "ReachGRPCServerTests",
            dependencies: [
                "ReachGRPCServer", "ReachCore", "ReachSupport", "ReachPOSIX", "ReachTesting", "ReachTestRigs",
                "GRPCHealthProto",
                .product(name: "GRPCCore", package: "grpc-swift-2"),
                .product(name: "GRPCNIOTransportHTTP2", package: "grpc-swift-nio-transport"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            exclude: ["Clients"],
            swiftSettings: strict
        ),
        // Prints status-API throughput (wrk) and fan-out latency figures.
        .executableTarget(
            name: "api-benchmark",
            dependencies: [
                "ReachServer", "ReachMetrics", "ReachCore", "ReachSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Hummingbird", package: "hummingbird"),
            ],
            path: "Benchmarks/API",
            swiftSettings: strict
        ),
        .testTarget(
            name: "ReachHooksTests",
            dependencies: [
                "ReachHooks", "ReachAPI", "ReachConfig", "ReachCore", "ReachSupport", "ReachMetrics", "ReachTesting",
                "ReachTestRigs",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            swiftSettings: strict
        ),
        // Writes history as fast as it can in a child process, for the test that kills it mid-write.
        .executableTarget(
            name: "history-writer-helper",
            dependencies: [
                "ReachHistory", "ReachConfig", "ReachCore", "ReachSupport",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/HistoryWriterHelper",
            swiftSettings: strict
        ),
        // What Yams made of YAML texts, which ReachConfigTests compare the reader with. A program of
        // its own, on which no test target depends: linked into the tests, Yams' copy of libyaml
        // would stand in for the system's (YamsOracle.swift).
        .executableTarget(
            name: "yams-oracle",
            dependencies: ["Yams"],
            path: "Tests/YamsOracle",
            swiftSettings: strict
        ),
        .testTarget(
            name: "ReachHistoryTests",
            dependencies: [
                "ReachHistory", "ReachAPI", "ReachConfig", "ReachCore", "ReachSupport", "ReachTesting", "ReachTestRigs",
                "history-writer-helper",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "ReachConfigTests",
            dependencies: [
                "ReachConfig", "ReachCore", "ReachSupport", "ReachTesting", "ReachTestRigs",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        // Logs its input through reachd's log output, for the tests that stop journald around it.
        .executableTarget(
            name: "journal-log-helper",
            dependencies: ["ReachDaemon", "ReachConfig", .product(name: "Logging", package: "swift-log")],
            path: "Tests/JournalLogHelper",
            swiftSettings: strict
        ),
        // The daemon: its composition root in-process, and reachd as a process.
        .testTarget(
            name: "ReachDaemonTests",
            dependencies: [
                "ReachDaemon", "ReachAPI", "ReachConfig", "ReachCore", "ReachEngine", "ReachSupport", "ReachPOSIX",
                "ReachSystemd", "ReachLogging", "ReachTesting", "ReachTestRigs",
                "reachd",
                "journal-log-helper",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            exclude: ["Clients"],
            swiftSettings: strict
        ),
        // The fault matrix: real reachd processes in network namespaces against every fault, with
        // the embedded service beside them (docs/fault-matrix.md); scripts/test runs it alone.
        .testTarget(
            name: "FaultMatrixTests",
            dependencies: [
                "ReachCore", "ReachLogging", "ReachTesting", "ReachTestRigs", "reachd", "embedded-verdicts-helper",
            ],
            swiftSettings: strict
        ),
        // The engine's parts, each against the real thing it asks (an HTTPS API on loopback, ...).
        .testTarget(
            name: "ReachEngineTests",
            dependencies: [
                "ReachEngine", "ReachConfig", "ReachCore", "ReachSupport", "ReachTesting", "ReachTestRigs",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        // reachctl as a person runs it, against a real reachd.
        .testTarget(
            name: "ReachctlTests",
            dependencies: ["ReachClient", "ReachTesting", "ReachTestRigs", "reachd", "reachctl"],
            swiftSettings: strict
        ),
        // The desktop agent (`reachctl notify-agent`) on a real desktop: Xvfb, a session bus, dunst.
        .testTarget(
            name: "NotifyAgentTests",
            dependencies: ["ReachTesting", "ReachTestRigs", "reachd", "reachctl"],
            swiftSettings: strict
        ),
        // Dashboards/: the Grafana dashboard and the alert rules against a real Prometheus scraping a real reachd.
        .testTarget(
            name: "DashboardsTests",
            dependencies: ["ReachTesting", "ReachTestRigs", "reachd"],
            swiftSettings: strict
        ),
    ]
)
