// Measures how long reachd takes to load a configuration with 1,000 targets (goal: well under a
// second). Run: swift run -c release config-load-benchmark [targets] [repetitions]
import Foundation
import ReachConfig

let targetCount = CommandLine.arguments.count > 1 ? Int(CommandLine.arguments[1]) ?? 1000 : 1000
let repetitions = CommandLine.arguments.count > 2 ? Int(CommandLine.arguments[2]) ?? 50 : 50

/// A realistic mix: HTTP targets with expectations and damping, TCP and gRPC targets.
func configuration(targets: Int) -> String {
    var yaml = "probe:\n  interval: 1s\n  timeout: 2s\npolicy: { quorum: \(targets / 2) }\ntargets:\n"
    for index in 0..<targets {
        switch index % 3 {
        case 0:
            yaml += """
                  - name: http-\(index)
                    kind: http
                    url: https://host\(index).example.com:8443/api/v1/health
                    interval: 1s
                    timeout: 2s
                    failures_before_down: 3
                    expect:
                      status: [200, "2xx"]
                      json: { pointer: /status, equals: ok }

                """
        case 1:
            yaml +=
                "  - name: tcp-\(index)\n    kind: tcp\n    address: 10.\(index / 65536).\(index / 256 % 256).\(index % 256):5432\n"
        default:
            yaml +=
                "  - name: grpc-\(index)\n    kind: grpc\n    address: \"[2001:db8::\(String(index, radix: 16))]:50051\"\n    service: backend\n"
        }
    }
    return yaml
}

let yaml = configuration(targets: targetCount)
var samples: [Duration] = []
let clock = ContinuousClock()
for _ in 0..<repetitions {
    let start = clock.now
    let loaded = try DaemonConfiguration.parse(yaml, source: "benchmark.yaml")
    samples.append(clock.now - start)
    precondition(loaded.targets.count == targetCount)
}
samples.sort()
func ms(_ duration: Duration) -> String {
    String(format: "%.2f", Double(duration.components.attoseconds) / 1e15 + Double(duration.components.seconds) * 1e3)
}
let p99 = samples[min(samples.count - 1, Int((Double(samples.count) * 0.99).rounded(.up)) - 1)]
print(
    "RESULT config-load: targets=\(targetCount) bytes=\(yaml.utf8.count) runs=\(repetitions) median=\(ms(samples[samples.count / 2]))ms p99=\(ms(p99))ms max=\(ms(samples.last!))ms"
)
