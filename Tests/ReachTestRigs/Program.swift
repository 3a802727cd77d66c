import Foundation
import ReachTesting

/// How a program ended and what it printed.
package struct ProgramResult: Sendable {
    package var status: Int32
    /// Standard output.
    package var output: String
    /// Standard error.
    package var errors: String
}

/// Runs `executable` to its end off the cooperative pool, feeding it `input`, and returns its
/// status, standard output and standard error (read side by side, so neither pipe can fill up).
package func runProgram(
    _ executable: String,
    _ arguments: [String] = [],
    environment: [String: String]? = nil,
    input: String? = nil
) async throws -> ProgramResult {
    try await offPool {
        Result { try runProgramBlocking(executable, arguments, environment: environment, input: input) }
    }.get()
}

/// ``runProgram(_:_:environment:input:)`` on the calling thread, for the rare caller that cannot
/// wait asynchronously (a `deinit`, a test trait).
package func runProgramBlocking(
    _ executable: String,
    _ arguments: [String] = [],
    environment: [String: String]? = nil,
    input: String? = nil
) throws -> ProgramResult {
    let process = Process()
    process.executableURL = URL(filePath: executable)
    process.arguments = arguments
    if let environment { process.environment = environment }
    let output = Pipe()
    let errors = Pipe()
    process.standardOutput = output
    process.standardError = errors
    let inputPipe = input.map { _ in Pipe() }
    process.standardInput = inputPipe ?? FileHandle.nullDevice
    try process.run()
    let errorText = ErrorText()
    let errorReader = Thread { errorText.set(errors.fileHandleForReading.readDataToEndOfFile()) }
    errorReader.start()
    if let inputPipe, let input {
        inputPipe.fileHandleForWriting.write(Data(input.utf8))
        try? inputPipe.fileHandleForWriting.close()
    }
    let outputData = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return ProgramResult(
        status: process.terminationStatus,
        output: String(decoding: outputData, as: UTF8.self),
        errors: errorText.wait()
    )
}

private final class ErrorText: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    private var data = Data()  // written once before `done` is signalled, read after

    func set(_ data: Data) {
        self.data = data
        done.signal()
    }

    func wait() -> String {
        done.wait()
        return String(decoding: data, as: UTF8.self)
    }
}
