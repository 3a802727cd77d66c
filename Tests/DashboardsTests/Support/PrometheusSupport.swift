import Foundation
import ReachTestRigs
import ReachTesting

// What the tests of Dashboards/ share: the Prometheus and promtool on this machine, Prometheus's
// HTTP API, and the queries of a Grafana dashboard as Prometheus would get them.

/// The full path of `name` on `PATH`, if it is there.
func executableOnPath(_ name: String) -> String? {
    let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
    return path.split(separator: ":").map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
}

let prometheusPath = executableOnPath("prometheus")
let promtoolPath = executableOnPath("promtool")

/// Grafana's variables, replaced by what Grafana would send for a short time range.
let grafanaSubstitutions: [(String, String)] = [
    ("${__rate_interval}", "1m"), ("$__rate_interval", "1m"),
    ("${__interval}", "15s"), ("$__interval", "15s"),
    ("${__range}", "5m"), ("$__range", "5m"),
    ("${job}", "reachd"), ("$job", "reachd"),
    ("${instance}", ".+"), ("$instance", ".+"),
    ("${site}", ".+"), ("$site", ".+"),
]

/// Every `expr` in a Grafana dashboard (panels, rows, annotations, variables) with its panel title.
func dashboardExpressions(of file: URL) throws -> [(panel: String, expr: String)] {
    let document = try JSONSerialization.jsonObject(with: Data(contentsOf: file))
    var found: [(String, String)] = []
    func walk(_ node: Any, title: String) {
        if let object = node as? [String: Any] {
            let title = object["title"] as? String ?? title
            if let expr = object["expr"] as? String { found.append((title, expr)) }
            for (_, value) in object { walk(value, title: title) }
        } else if let array = node as? [Any] {
            for element in array { walk(element, title: title) }
        }
    }
    walk(document, title: "dashboard")
    return found
}

func substitutingGrafanaVariables(_ expr: String) -> String {
    grafanaSubstitutions.reduce(expr) { $0.replacingOccurrences(of: $1.0, with: $1.1) }
}

/// Runs a program to completion with `input` on its standard input; returns its status and both outputs together.
func run(
    _ executable: String,
    _ arguments: [String],
    input: String? = nil
) async throws -> (status: Int32, output: String) {
    let result = try await runProgram(executable, arguments, input: input)
    return (result.status, result.output + result.errors)
}

/// The HTTP API of a Prometheus on 127.0.0.1.
struct PrometheusAPI {
    let port: Int

    struct Answer {
        var status: String
        var results: Int
        var error: String
        var raw: String
    }

    /// An instant query: the status, how many results (a scalar counts as one), any error.
    func query(_ promQL: String) async throws -> Answer {
        let (_, body) = try await loopbackGet(
            port: port,
            path: "/api/v1/query?query=\(percentEncodedQueryValue(promQL))"
        )
        let document = try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any] ?? [:]
        let data = document["data"] as? [String: Any] ?? [:]
        let results: Int
        switch data["resultType"] as? String {
        case "vector", "matrix": results = (data["result"] as? [Any])?.count ?? 0
        case "scalar", "string": results = 1
        default: results = 0
        }
        return Answer(
            status: document["status"] as? String ?? "none",
            results: results,
            error: document["error"] as? String ?? "",
            raw: body
        )
    }

    func hasData(_ promQL: String) async -> Bool {
        guard let answer = try? await query(promQL) else { return false }
        return answer.status == "success" && answer.results > 0
    }

    /// Every loaded rule: name, query, health ("ok", "err", "unknown") and last error.
    func rules() async throws -> [(name: String, query: String, health: String, lastError: String)] {
        let (_, body) = try await loopbackGet(port: port, path: "/api/v1/rules")
        let document = try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any] ?? [:]
        let groups = (document["data"] as? [String: Any])?["groups"] as? [[String: Any]] ?? []
        return groups.flatMap { $0["rules"] as? [[String: Any]] ?? [] }.map {
            (
                $0["name"] as? String ?? "", $0["query"] as? String ?? "", $0["health"] as? String ?? "",
                $0["lastError"] as? String ?? ""
            )
        }
    }
}

/// Asks Prometheus `condition` every 100 ms (each ask is a query it evaluates) until it holds or
/// `timeout` passes; says whether it held.
func eventually(within timeout: Duration, _ condition: () async throws -> Bool) async -> Bool {
    (try? await waitUntil("Prometheus to say so", timeout: timeout, every: .milliseconds(100)) {
        (try? await condition()) == true
    }) != nil
}

/// Starts `prometheus` on `configuration` with its data in `directory`, on a free loopback port,
/// and returns once it is ready.
func startPrometheus(
    _ prometheus: String,
    configuration: URL,
    in directory: URL
) async throws -> (ChildProcess, PrometheusAPI) {
    let port = try freeLoopbackPort()
    let server = try ChildProcess(
        "prometheus",
        executable: prometheus,
        arguments: [
            "--config.file=\(configuration.path)", "--storage.tsdb.path=\(directory.appending(path: "data").path)",
            "--web.listen-address=127.0.0.1:\(port)", "--web.enable-lifecycle", "--log.level=warn",
        ],
        errorLog: directory.appending(path: "prometheus.log").path,
        directory: directory.path
    )
    let ready = await eventually(within: .seconds(60)) {
        try await loopbackGet(port: port, path: "/-/ready").status == 200
    }
    guard ready else {
        server.signal(SIGKILL)
        throw ChildProcess.Failed(description: "Prometheus never got ready:\n\(server.errors)")
    }
    return (server, PrometheusAPI(port: port))
}
