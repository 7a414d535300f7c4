import Foundation

/// Why a reference program did not answer.
public struct ReferencePythonError: Error, CustomStringConvertible {
    public let description: String
}

/// The Python of the reference venv (.build/pyref, made by scripts/pyref.sh, which
/// scripts/test.sh runs): the independent decoders tests compare thumbd's output with (PyPI's
/// blurhash, thumbhash-python and Pillow, pinned by hash). Without the venv a test fails with
/// what to run, rather than skipping.
public enum ReferencePython {
    /// The package's root: this file is Sources/TestSupport/ReferencePython.swift.
    public static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    public static let python = root.appendingPathComponent(".build/pyref/venv/bin/python").path

    /// Runs `program` (`python -c`) with `input` on its standard input; its standard output.
    /// On a thread of its own: the wait for the process would otherwise hold one of the
    /// cooperative pool's few threads, which the code under test may need meanwhile.
    public static func run(_ program: String, input: [UInt8]) async throws -> [UInt8] {
        let python = Self.python
        guard FileManager.default.isExecutableFile(atPath: python) else {
            throw ReferencePythonError(
                description: "no reference decoders at \(python): run scripts/pyref.sh (scripts/test.sh does)")
        }
        return try await withCheckedThrowingContinuation { continuation in
            Thread {
                continuation.resume(
                    with: Result {
                        let process = Process()
                        process.executableURL = URL(fileURLWithPath: python)
                        process.arguments = ["-c", program]
                        let stdin = Pipe()
                        let output = Pipe()
                        let errors = Pipe()
                        process.standardInput = stdin
                        process.standardOutput = output
                        process.standardError = errors
                        try process.run()
                        // In turn: the reference programs read all their input before they write.
                        stdin.fileHandleForWriting.write(Data(input))
                        try stdin.fileHandleForWriting.close()
                        let data = output.fileHandleForReading.readDataToEndOfFile()
                        let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                        process.waitUntilExit()
                        guard process.terminationStatus == 0 else {
                            throw ReferencePythonError(
                                description: "the reference program exited with \(process.terminationStatus): \(text)")
                        }
                        return [UInt8](data)
                    })
            }.start()
        }
    }
}
