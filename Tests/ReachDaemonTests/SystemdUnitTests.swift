import Foundation
import ReachTestRigs
import ReachTesting
import Testing

/// The units in systemd/, installed by scripts/install into a staging directory, pass
/// `systemd-analyze verify`, and the sandbox scores at most 1.3 on `systemd-analyze security`.
@Suite("systemd units")
struct SystemdUnitTests {
    /// The highest exposure `systemd-analyze security` may give a system unit.
    static let exposureLimit = 1.3

    private static func run(
        _ executable: String,
        _ arguments: [String],
        environment: [String: String] = [:]
    ) async throws -> (status: Int32, output: String) {
        let result = try await runProgram(
            executable,
            arguments,
            environment: ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        )
        return (result.status, result.output + result.errors)
    }

    /// A staged install (`DESTDIR=stage scripts/install /usr`) with the test build's binaries.
    private static func stagedInstall() async throws -> TemporaryDirectory {
        let stage = try TemporaryDirectory("install")
        let install = try await run(
            "/bin/bash",
            [BuiltProducts.packageRoot.appending(path: "scripts/install").path, "/usr"],
            environment: ["DESTDIR": stage.path, "REACHD_BINARIES": BuiltProducts.directory.path]
        )
        #expect(install.status == 0, "\(install.output)")
        return stage
    }

    private static var shippedUnits: [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: BuiltProducts.packageRoot.appending(path: "systemd").path))?
            .filter { $0.hasSuffix(".service") }.sorted() ?? []
    }

    /// The installed unit with its programs pointing into the stage, so verify finds them.
    private static func stagedCopy(of unit: String, in stage: URL) throws -> (url: URL, user: Bool)? {
        for kind in ["system", "user"] {
            let installed = stage.appending(path: "usr/lib/systemd/\(kind)/\(unit)")
            guard let text = try? String(contentsOf: installed, encoding: .utf8) else { continue }
            let directory = stage.appending(path: "verify-\(kind)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let copy = directory.appending(path: unit)
            try text.replacingOccurrences(of: "=/usr/bin/", with: "=\(stage.path)/usr/bin/")
                .replacingOccurrences(of: "=-/usr/bin/", with: "=-\(stage.path)/usr/bin/")
                .write(to: copy, atomically: true, encoding: .utf8)
            return (copy, kind == "user")
        }
        return nil
    }

    @Test func installPutsEverythingInItsPlace() async throws {
        let staged = try await Self.stagedInstall()
        let stage = staged.url
        for path in ["usr/bin/reachd", "usr/bin/reachctl"] {
            #expect(FileManager.default.isExecutableFile(atPath: stage.appending(path: path).path), "\(path)")
        }
        #expect(
            FileManager.default.fileExists(atPath: stage.appending(path: "usr/lib/systemd/catalog/reachd.catalog").path)
        )
        #expect(FileManager.default.fileExists(atPath: stage.appending(path: "etc/reachd/reachd.yaml").path))
        #expect(
            FileManager.default.fileExists(atPath: stage.appending(path: "usr/lib/systemd/system/reachd.service").path)
        )
        let unit = try String(
            contentsOf: stage.appending(path: "usr/lib/systemd/system/reachd.service"),
            encoding: .utf8
        )
        #expect(
            unit.contains("ExecStart=/usr/bin/reachd --config /etc/reachd/reachd.yaml"),
            "the prefix is written into the unit"
        )
    }

    @Test func everyUnitVerifies() async throws {
        let staged = try await Self.stagedInstall()
        let stage = staged.url
        let units = Self.shippedUnits
        #expect(units.contains("reachd.service") && units.contains("reachd-wait-online.service"))
        // All copies first: a unit's dependencies (Requires=reachd.service) resolve beside it.
        var copies: [String: (url: URL, user: Bool)] = [:]
        for unit in units {
            let copy = try Self.stagedCopy(of: unit, in: stage)
            #expect(copy != nil, "scripts/install did not install \(unit)")
            copies[unit] = copy
        }
        for unit in units {
            guard let copy = copies[unit] else { continue }
            // --man=no: a staged install has no man pages (scripts/install makes them only when it
            // builds); the pages the units name are checked below.
            // A user manager needs a runtime directory, even one that verify only looks at.
            let runtime = stage.appending(path: "runtime")
            try FileManager.default.createDirectory(
                at: runtime,
                withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700]
            )
            let verify = try await Self.run(
                "/usr/bin/systemd-analyze",
                (copy.user ? ["--user"] : []) + ["verify", "--man=no", copy.url.path],
                environment: copy.user ? ["XDG_RUNTIME_DIR": runtime.path] : [:]
            )
            #expect(verify.status == 0 && verify.output.isEmpty, "\(unit):\n\(verify.output)")
        }
    }

    /// Every `man:PAGE(N)` a unit's `Documentation=` or the catalog's `Support:` names is a page
    /// scripts/install installs (it names each file, `PAGE.N`).
    @Test func unitsAndCatalogNameOnlyTheManPagesInstallMakes() throws {
        let script = try String(
            contentsOf: BuiltProducts.packageRoot.appending(path: "scripts/install"),
            encoding: .utf8
        )
        let page = /man:([A-Za-z0-9_.-]+)\(([1-9])\)/
        for file in Self.shippedUnits + ["reachd.catalog"] {
            let text = try String(
                contentsOf: BuiltProducts.packageRoot.appending(path: "systemd/\(file)"),
                encoding: .utf8
            )
            let lines = text.split(separator: "\n").filter {
                $0.hasPrefix("Documentation=") || $0.hasPrefix("Support:")
            }
            for match in lines.flatMap({ $0.matches(of: page) }) {
                let name = "\(match.output.1).\(match.output.2)"
                #expect(script.contains(name), "\(file) names \(name), which scripts/install does not install")
            }
        }
    }

    /// A call a unit's `SystemCallFilter=` denies must fail with an error, not kill the program with
    /// SIGSYS: every Swift program's libdispatch calls setpriority (in `@resources`) for each worker
    /// thread, which killed `reachctl wait-online` under the real manager.
    @Test func everySystemCallFilterReturnsAnErrorInsteadOfKilling() throws {
        for unit in Self.shippedUnits {
            let text = try String(
                contentsOf: BuiltProducts.packageRoot.appending(path: "systemd/\(unit)"),
                encoding: .utf8
            )
            let lines = text.split(separator: "\n")
            guard lines.contains(where: { $0.hasPrefix("SystemCallFilter=") }) else { continue }
            #expect(lines.contains("SystemCallErrorNumber=EPERM"), "\(unit) filters system calls without an errno")
        }
    }

    @Test func sandboxExposureIsAtMostTheLimit() async throws {
        let staged = try await Self.stagedInstall()
        let stage = staged.url
        for unit in Self.shippedUnits {
            guard let copy = try Self.stagedCopy(of: unit, in: stage), !copy.user else { continue }
            let security = try await Self.run(
                "/usr/bin/systemd-analyze",
                ["security", "--offline=yes", "--no-pager", copy.url.path]
            )
            let line = security.output.split(separator: "\n").first { $0.contains("Overall exposure level") } ?? ""
            let score = line.split(separator: " ").compactMap { Double($0) }.first
            print("\(unit): \(line)")
            #expect(score.map { $0 <= Self.exposureLimit } == true, "\(unit): \(security.output.suffix(2000))")
        }
    }
}
