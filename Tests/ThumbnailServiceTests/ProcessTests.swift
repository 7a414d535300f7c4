import Foundation
import TestSupport
import Testing

/// The real `thumbd` executable: --help, invalid settings, and SIGTERM → graceful exit 0.
@Suite struct ProcessTests {
    /// Built next to the test bundle by `swift build --build-tests`.
    static let binary = URL(fileURLWithPath: ProcessInfo.processInfo.arguments[0]).deletingLastPathComponent()
        .appendingPathComponent("thumbd")

    @Test func helpListsEverySettingAndExitsZero() async throws {
        let (status, output, _) = try await Self.run(["--help"])
        #expect(status == 0)
        for flag in [
            "--host", "--port", "--cache-bytes", "--workers", "--queue-capacity", "--max-source-bytes",
            "--max-source-pixels", "--allow-loopback-sources", "--allow-private-sources", "--allowed-source-hosts",
        ] {
            #expect(output.contains(flag), "\(flag)")
        }
        #expect(output.contains("THUMBD_CACHE_BYTES"))
    }

    @Test func invalidSettingsAreAllReportedWithANonZeroExit() async throws {
        let (status, _, errors) = try await Self.run(
            ["--port", "x", "--workers", "0"], environment: ["THUMBD_Q": "1", "THUMBD_HOST": "nowhere"])
        #expect(status == 2)
        #expect(errors.contains("--port x"))
        #expect(errors.contains("--workers 0"))
        #expect(errors.contains("THUMBD_HOST=nowhere"))
    }

    @Test func sigtermStopsGracefullyWithExitZero() async throws {
        let process = Process()
        process.executableURL = Self.binary
        process.arguments = ["--port", "0", "--shutdown-grace", "2"]
        let stderr = Pipe()
        process.standardError = stderr
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let port = try await Self.onThread { () -> Int in
            // "… listening on 127.0.0.1:PORT" is the first event line.
            var text = ""
            let handle = stderr.fileHandleForReading
            while !text.contains("listening on") || !text.contains("\n") {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                text += String(decoding: chunk, as: UTF8.self)
            }
            let tail = text.components(separatedBy: "listening on 127.0.0.1:").last ?? ""
            return Int(tail.prefix { $0.isNumber }) ?? 0
        }
        #expect(port > 0)
        let health = try await TestHTTPClient.request(port: port, target: "/livez")
        #expect(health.status == 200)
        process.terminate()  // SIGTERM
        let status = try await Self.onThread { () -> Int32 in
            process.waitUntilExit()
            return process.terminationStatus
        }
        #expect(process.terminationReason == .exit)
        #expect(status == 0)
    }

    static func run(_ arguments: [String], environment: [String: String] = [:]) async throws -> (Int32, String, String)
    {
        try await onThread {
            let process = Process()
            process.executableURL = binary
            process.arguments = arguments
            process.environment = environment
            let output = Pipe()
            let errors = Pipe()
            process.standardOutput = output
            process.standardError = errors
            try process.run()
            let out = output.fileHandleForReading.readDataToEndOfFile()
            let err = errors.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return (
                process.terminationStatus, String(decoding: out, as: UTF8.self), String(decoding: err, as: UTF8.self)
            )
        }
    }

    /// Blocking work on its own thread, never on the cooperative pool.
    static func onThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try work() }) }.start()
        }
    }
}
