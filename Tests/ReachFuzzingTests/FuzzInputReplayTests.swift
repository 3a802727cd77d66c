import Foundation
import ReachFuzzing
import ReachTesting
import Testing

/// Every committed fuzz input, replayed in the ordinary `swift test` run (as systemd's fuzz-main
/// replays its corpora): each file of `FuzzTesting/Corpora/<target>/` and
/// `FuzzTesting/Crashes/<target>/` goes through the same `FuzzInput` function the fuzz executable
/// calls. A crash input that traps again is a bug come back; a corpus folder that is missing or
/// empty fails, so a target can never lose its seeds unnoticed.
@Suite("Fuzz inputs replay without a crash")
struct FuzzInputReplayTests {
    static let fuzzTesting = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
        .appending(path: "FuzzTesting")

    /// The names of the targets, as `FuzzInput.targets` lists them.
    static let targetNames = FuzzInput.targets.map(\.name)

    /// The files of `folder` (not hidden ones such as `.gitkeep`), sorted; fails when there are none.
    static func inputs(_ folder: String, of target: String) throws -> [URL] {
        let directory = fuzzTesting.appending(path: folder).appending(path: target)
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { !$0.hasPrefix(".") }
            .sorted()
        return names.map { directory.appending(path: $0) }
    }

    /// Runs every input through `run` off the cooperative pool: the status-api target blocks its
    /// thread until a task on the pool answers, which a test on that pool must not do.
    static func replay(_ inputs: [[UInt8]], through run: @escaping @Sendable ([UInt8]) -> Void) async {
        await offPool { for input in inputs { run(input) } }
    }

    @Test("The corpus replays", arguments: targetNames)
    func corpus(_ target: String) async throws {
        let run = try #require(FuzzInput.targets.first { $0.name == target }?.run)
        let files = try Self.inputs("Corpora", of: target)
        #expect(!files.isEmpty, "FuzzTesting/Corpora/\(target) holds no seed")
        await Self.replay(try files.map { Array(try Data(contentsOf: $0)) }, through: run)
    }

    @Test("Every crash input found replays without a crash", arguments: targetNames)
    func crashes(_ target: String) async throws {
        let run = try #require(FuzzInput.targets.first { $0.name == target }?.run)
        let directory = Self.fuzzTesting.appending(path: "Crashes").appending(path: target)
        #expect(FileManager.default.fileExists(atPath: directory.path), "FuzzTesting/Crashes/\(target) is missing")
        await Self.replay(try Self.inputs("Crashes", of: target).map { Array(try Data(contentsOf: $0)) }, through: run)
    }

    @Test("Every target has a corpus, a crash folder, an executable and nothing else is there")
    func layout() throws {
        for folder in ["Corpora", "Crashes"] {
            let present = try FileManager.default.contentsOfDirectory(
                atPath: Self.fuzzTesting.appending(path: folder).path
            ).filter { !$0.hasPrefix(".") }
            #expect(
                Set(present) == Set(Self.targetNames),
                "FuzzTesting/\(folder) holds \(present.sorted()), not \(Self.targetNames.sorted())"
            )
        }
    }
}
