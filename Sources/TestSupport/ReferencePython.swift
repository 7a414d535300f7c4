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
    /// On a thread of its own (`ChildProcess.run`): the wait for the process would otherwise hold
    /// one of the cooperative pool's few threads, which the code under test may need meanwhile.
    public static func run(_ program: String, input: [UInt8]) async throws -> [UInt8] {
        let python = Self.python
        guard FileManager.default.isExecutableFile(atPath: python) else {
            throw ReferencePythonError(
                description: "no reference decoders at \(python): run scripts/pyref.sh (scripts/test.sh does)")
        }
        let outcome = try await ChildProcess.run(python, ["-c", program], input: input)
        guard outcome.status == 0 else {
            throw ReferencePythonError(
                description: "the reference program exited with \(outcome.status): \(outcome.errorsText)")
        }
        return outcome.output
    }
}
