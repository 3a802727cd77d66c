// swift-tools-version: 6.2
import PackageDescription

/// Our own code builds in Swift 6 language mode with every warning an error.
let strict: [SwiftSetting] = [
    .treatAllWarnings(as: .error),
]

/// How the release daemon is linked, for the memory a host pays for (README, "Memory"): not
/// position-independent, so the loader writes no relocations into its 1.4 MB of Swift metadata and
/// those pages stay shared and clean (as Go links blackbox_exporter); and no dynamic symbol table
/// for its own symbols, which `-static-stdlib` would otherwise export (3.6 MB of relocations and
/// 1.3 MB of symbols read at start). Build it with `--static-swift-stdlib` (scripts/run does), so
/// that only the parts of the Swift runtime and Foundation it uses are loaded.
let releaseDaemonLinking: [LinkerSetting] = [
    .unsafeFlags(["-Xclang-linker", "-no-pie", "-Xlinker", "--no-export-dynamic"], .when(platforms: [.linux], configuration: .release))
]

let package = Package(
    name: "reachd",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "reachd", targets: ["reachd"]),
        .executable(name: "reachctl", targets: ["reachctl"]),
        .library(name: "ReachCore", targets: ["ReachCore"]),
        .library(name: "ReachLink", targets: ["ReachLink"]),
        .library(name: "ReachKit", targets: ["ReachKit"]),
        .library(name: "ReachKitEmbedded", targets: ["ReachKitEmbedded"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.0"),
        .package(url: "https://github.com/apple/swift-collections.git", from: "1.1.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.6.0"),
        .package(url: "https://github.com/jpsim/Yams.git", from: "6.0.0"),
        .package(url: "https://github.com/x-sheep/swift-property-based.git", from: "2.0.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.0"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/grpc/grpc-swift-2.git", from: "2.4.0"),
        .package(url: "https://github.com/grpc/grpc-swift-nio-transport.git", from: "2.9.0"),
        .package(url: "https://github.com/grpc/grpc-swift-protobuf.git", from: "2.4.0"),
        .package(url: "https://github.com/apple/swift-protobuf.git", from: "1.39.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.0"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swiftlang/swift-subprocess.git", from: "1.0.2"),
        .package(url: "https://github.com/apple/swift-system.git", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.0"..<"5.0.0"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
    ],
    targets: [
        // The pure core: state model, combiner, hub, callbacks. No I/O.
        .target(
            name: "ReachCore",
            dependencies: [
                .product(name: "Logging", package: "swift-log"),
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "HeapModule", package: "swift-collections"),
            ],
            swiftSettings: strict
        ),
        // A named POSIX thread and an eventfd doorbell, for adapters that block in poll (netlink, sd-bus).
        .target(name: "CDedicatedThread"),
        .target(name: "DedicatedThread", dependencies: ["CDedicatedThread"], swiftSettings: strict),
        // The Linux rtnetlink ABI (linux/netlink.h, linux/rtnetlink.h), which Glibc's module lacks.
        .target(name: "CNetlink"),
        // The rtnetlink link adapter: feeds the core complete link snapshots without polling.
        .target(
            name: "ReachLink",
            dependencies: [
                "ReachCore",
                "CNetlink",
                "DedicatedThread",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        // grpc.health.v1 messages and service stubs, generated from Protos/health.proto and committed.
        .target(
            name: "GRPCHealth",
            dependencies: [
                .product(name: "GRPCCore", package: "grpc-swift-2"),
                .product(name: "GRPCProtobuf", package: "grpc-swift-protobuf"),
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            ],
            exclude: ["health.proto"]
        ),
        // Health probes: HTTP(S) on SwiftNIO (NIOHTTP1, NIOSSL), TCP connect, gRPC health.
        .target(
            name: "ReachProbes",
            dependencies: [
                "ReachCore",
                "GRPCHealth",
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
        // libsystemd (sd-bus now; sd-journal and sd-daemon later): the project's one C library dependency.
        .systemLibrary(
            name: "CSystemd",
            pkgConfig: "libsystemd",
            providers: [.apt(["libsystemd-dev"])]
        ),
        // systemd and D-Bus integration: logind's sleep signal.
        .target(
            name: "ReachSystemd",
            dependencies: ["ReachCore", "CSystemd", "DedicatedThread", .product(name: "Logging", package: "swift-log")],
            swiftSettings: strict
        ),
        // The status API for programs and people: JSON status, Server-Sent Events, checks, liveness, Prometheus metrics.
        .target(
            name: "ReachServer",
            dependencies: [
                "ReachCore",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Metrics", package: "swift-metrics"),
            ],
            exclude: ["openapi.yaml"],
            swiftSettings: strict
        ),
        // The gRPC face of the verdict: grpc.health.v1.Health (Check, Watch, List) over the unified state and each target.
        .target(
            name: "ReachGRPC",
            dependencies: [
                "ReachCore",
                "GRPCHealth",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "GRPCCore", package: "grpc-swift-2"),
                .product(name: "GRPCNIOTransportHTTP2", package: "grpc-swift-nio-transport"),
                .product(name: "GRPCProtobuf", package: "grpc-swift-protobuf"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),
        // Hook scripts and webhooks: restoration work for the programs that own it.
        .target(
            name: "ReachHooks",
            dependencies: [
                "ReachCore",
                "ReachServer",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Subprocess", package: "swift-subprocess"),
                .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),
        // YAML configuration: parsing, validation, the embedded default.
        .target(
            name: "ReachConfig",
            dependencies: ["ReachCore", "Yams", .product(name: "Logging", package: "swift-log")],
            swiftSettings: strict
        ),
        // The composition root: wires configuration, core and adapters into one service group.
        .target(
            name: "ReachDaemon",
            dependencies: [
                "ReachCore",
                "ReachConfig",
                "ReachLink",
                "ReachProbes",
                "ReachSystemd",
                "ReachServer",
                "ReachGRPC",
                "ReachHooks",
                .product(name: "Logging", package: "swift-log"),
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
                "ReachSystemd",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strict,
            linkerSettings: releaseDaemonLinking
        ),
        .executableTarget(
            name: "reachctl",
            dependencies: [
                "ReachCore", "ReachServer", .product(name: "AsyncHTTPClient", package: "async-http-client"), .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOHTTP1", package: "swift-nio"),
                "ReachSystemd", .product(name: "Logging", package: "swift-log"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strict
        ),
        // The library for programs: the connectivity service backed by reachd and a durable queue
        // that drains on restoration. Small on purpose: no server, no probers, no YAML, no HTTP
        // client library or TLS (reachd speaks plain HTTP, over SwiftNIO here); ReachLink only for
        // the system clock (it links no more than a netlink reader).
        .target(
            name: "ReachKit",
            dependencies: [
                "ReachCore",
                "ReachLink",
                "DedicatedThread",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Metrics", package: "swift-metrics"),
            ],
            swiftSettings: strict
        ),
        // The same service for hosts without reachd: the daemon's monitor, netlink and probers in-process.
        .target(
            name: "ReachKitEmbedded",
            dependencies: [
                "ReachKit", "ReachCore", "ReachConfig", "ReachLink", "ReachProbes",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        // Uses ReachKit as a program would: a cache-warming callback and an upload queue.
        .executableTarget(
            name: "reachkit-example",
            dependencies: ["ReachKit", "ReachKitEmbedded", "ReachCore", "ReachConfig", .product(name: "Logging", package: "swift-log")],
            path: "Examples/ReachKitExample",
            swiftSettings: strict
        ),
        // Drains a queue in a child process, for the test that kills it mid-drain.
        .executableTarget(
            name: "queue-drain-helper",
            dependencies: ["ReachKit", "ReachKitEmbedded", "ReachCore", "ReachConfig", .product(name: "Logging", package: "swift-log")],
            path: "Tests/QueueDrainHelper",
            swiftSettings: strict
        ),
        .testTarget(
            name: "ReachKitTests",
            dependencies: [
                "ReachKit", "ReachKitEmbedded", "ReachCore", "ReachConfig", "ReachTesting", "reachd", "queue-drain-helper", "reachkit-example",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: strict
        ),
        // What the ReachKit benchmarks share: the queued item, timing, printing.
        .target(name: "ReachKitBenchmarkSupport", path: "Benchmarks/ReachKitBenchmarkSupport", swiftSettings: strict),
        // Prints durable enqueue throughput beside a bare SQLite loop: ReachKit alone, quick to build.
        .executableTarget(
            name: "reachkit-enqueue-benchmark",
            dependencies: [
                "ReachKit", "ReachKitBenchmarkSupport",
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
                "ReachKit", "ReachKitEmbedded", "ReachCore", "ReachConfig", "ReachKitBenchmarkSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
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
        // Fakes that surround the unit under test: a manual clock, an in-memory link source.
        .target(
            name: "ReachTesting",
            dependencies: ["ReachCore"],
            path: "Tests/ReachTesting",
            exclude: ["SystemBus"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "ReachCoreTests",
            dependencies: [
                "ReachCore",
                "ReachTesting",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "ReachLinkTests",
            dependencies: [
                "ReachLink",
                "ReachCore",
                "ReachTesting",
                .product(name: "InMemoryLogging", package: "swift-log"),
            ],
            exclude: ["Fixtures/capture-netlink.py"],
            swiftSettings: strict
        ),
        // Prints link-loss and link-gain latency figures from a veth flapped in a namespace.
        .executableTarget(
            name: "link-flap-benchmark",
            dependencies: ["ReachLink", "ReachCore", "CNetlink"],
            path: "Benchmarks/LinkFlap",
            swiftSettings: strict
        ),
        .testTarget(
            name: "ReachProbesTests",
            dependencies: [
                "ReachProbes",
                "ReachCore",
                "ReachTesting",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            exclude: ["Servers"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "ReachSystemdTests",
            dependencies: ["ReachSystemd", "ReachCore", "ReachTesting"],
            swiftSettings: strict
        ),
        // Prints probe cost, tick lag and detection latency against real local servers.
        .executableTarget(
            name: "probe-benchmark",
            dependencies: ["ReachProbes", "ReachLink", "ReachCore", .product(name: "Logging", package: "swift-log")],
            path: "Benchmarks/Probes",
            swiftSettings: strict
        ),
        .testTarget(
            name: "ReachServerTests",
            dependencies: [
                "ReachServer",
                "ReachCore",
                "ReachTesting",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            exclude: ["Clients"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "ReachGRPCTests",
            dependencies: [
                "ReachGRPC", "ReachCore", "ReachTesting", "GRPCHealth",
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
                "ReachServer", "ReachCore",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Hummingbird", package: "hummingbird"),
            ],
            path: "Benchmarks/API",
            swiftSettings: strict
        ),
        .testTarget(
            name: "ReachHooksTests",
            dependencies: ["ReachHooks", "ReachCore", "ReachServer", "ReachTesting", .product(name: "Logging", package: "swift-log")],
            exclude: ["Servers"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "ReachConfigTests",
            dependencies: ["ReachConfig", "ReachCore"],
            swiftSettings: strict
        ),
        // Logs its input through reachd's log output, for the tests that stop journald around it.
        .executableTarget(
            name: "journal-log-helper",
            dependencies: ["ReachDaemon", "ReachConfig", .product(name: "Logging", package: "swift-log")],
            path: "Tests/JournalLogHelper",
            swiftSettings: strict
        ),
        .testTarget(
            name: "ReachDaemonTests",
            dependencies: ["ReachDaemon", "ReachConfig", "ReachCore", "ReachSystemd", "ReachTesting", "reachd", "journal-log-helper"],
            exclude: ["Clients"],
            swiftSettings: strict
        ),
    ]
)
