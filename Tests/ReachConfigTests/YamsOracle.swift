import Foundation
import ReachTestRigs

/// What Yams made of YAML texts, asked of `yams-oracle` (Tests/YamsOracle), the program built next
/// to the test bundle: Yams' own copy of libyaml must not be linked into the tests, where its
/// symbols would stand in for the system's libyaml that reachd and the reader under test link.
enum YamsOracle {
    static let path = URL(filePath: CommandLine.arguments[0]).deletingLastPathComponent()
        .appending(path: "yams-oracle").path

    struct Failed: Error, CustomStringConvertible {
        var description: String
    }

    /// Yams' answer for each input: `compose` gives `ok SHAPE` or `error DESCRIPTION`, `tag` the
    /// tag its default resolver gives a plain scalar.
    static func answers(_ mode: String, for inputs: [String]) async throws -> [String] {
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw Failed(description: "\(path) is missing: build it with `swift build --build-tests`")
        }
        let result = try await runProgram(path, [mode], input: inputs.map { "\($0.utf8.count)\n\($0)" }.joined())
        guard result.status == 0 else { throw Failed(description: "yams-oracle \(mode): \(result.errors)") }
        var answers: [String] = []
        var rest = Substring(result.output).utf8[...]
        while let newline = rest.firstIndex(of: 0x0A),
            let count = Int(String(decoding: rest[..<newline], as: UTF8.self))
        {
            let start = rest.index(after: newline)
            let end = rest.index(start, offsetBy: count)
            answers.append(String(decoding: rest[start..<end], as: UTF8.self))
            rest = rest[end...]
        }
        guard answers.count == inputs.count else {
            throw Failed(description: "yams-oracle \(mode) answered \(answers.count) of \(inputs.count) inputs")
        }
        return answers
    }
}
