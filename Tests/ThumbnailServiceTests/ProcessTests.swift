import Foundation
import Primitives
import Synchronization
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
            "--drain-delay", "--log-format", "/readyz",
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

    @Test func sigtermDrainsThenStopsGracefullyWithExitZero() async throws {
        let thumbd = try RunningThumbd(["--port", "0", "--shutdown-grace", "2", "--drain-delay", "0.2"])
        let port = try await thumbd.port()
        #expect(try await TestHTTPClient.request(port: port, target: "/livez").status == 200)
        #expect(try await TestHTTPClient.request(port: port, target: "/readyz").status == 200)
        thumbd.process.signal(SIGTERM)  // SIGTERM; the drain delay then runs out by itself
        #expect(try await thumbd.exitStatus() == 0)
        let log = thumbd.log
        for event in ["event=settings ", "event=start ", "event=drain ", "event=stopping ", "event=stopped "] {
            #expect(log.contains(event), "\(event): \(log)")
        }
        #expect(log.contains("event=drain-end msg=\"drain delay over\" cut-short=false"), "\(log)")
    }

    /// `main` starts the thread that trims glibc's heaps (`MallocTrim`, default once a second) and
    /// `--malloc-trim-interval 0` starts none. Its name is how it is found (`/proc/PID/task`).
    @Test func theTrimmingThreadRunsUnlessTheIntervalIsZero() async throws {
        for (arguments, expected) in [([String](), true), (["--malloc-trim-interval", "0"], false)] {
            let thumbd = try RunningThumbd(["--port", "0", "--drain-delay", "0", "--shutdown-grace", "2"] + arguments)
            let port = try await thumbd.port()
            #expect(try await TestHTTPClient.request(port: port, target: "/livez").status == 200)
            let tasks = "/proc/\(thumbd.process.pid)/task"
            let threadNames = {
                ((try? FileManager.default.contentsOfDirectory(atPath: tasks)) ?? []).compactMap {
                    try? String(contentsOfFile: "\(tasks)/\($0)/comm", encoding: .utf8)
                        .trimmingCharacters(in: .whitespacesAndNewlines)
                }
            }
            // Started before the server listens, but it names itself once running: waited for.
            // Absent, it would have been named long before /livez answered.
            let found =
                expected
                ? await eventually(within: .seconds(30)) { threadNames().contains("thumbd-trim") }
                : threadNames().contains("thumbd-trim")
            #expect(found == expected, "\(arguments): \(threadNames())")
            thumbd.process.signal(SIGTERM)
            #expect(try await thumbd.exitStatus() == 0)
        }
    }

    /// SIGTERM: /readyz turns 503 at once while /thumb and /livez are still served (closing their
    /// connections); a second signal ends the drain; exit 0. The log is JSON, one object a line.
    @Test func duringTheDrainOnlyReadyzRefusesAndASecondSignalEndsIt() async throws {
        let origin = try TestOrigin(routes: ["/p.jpg": .ok(Fixtures.jpeg(width: 300, height: 200))])
        defer { origin.stop() }
        // A drain far longer than the test: only the second signal can end it.
        let thumbd = try RunningThumbd([
            "--port", "0", "--shutdown-grace", "2", "--drain-delay", "600", "--allow-loopback-sources",
            "--log-format", "json",
        ])
        let port = try await thumbd.port()
        let thumb = "/thumb?url=\(Harness.encode(origin.url("/p.jpg")))&w=100"
        #expect(try await TestHTTPClient.request(port: port, target: "/readyz").status == 200)
        #expect(try await TestHTTPClient.request(port: port, target: thumb).status == 200)

        thumbd.process.signal(SIGTERM)  // SIGTERM
        let turned = await eventually(within: .seconds(30)) {
            (try? await TestHTTPClient.request(port: port, target: "/readyz").status) == 503
        }
        #expect(turned)
        let readyz = try await TestHTTPClient.request(port: port, target: "/readyz")
        try expectProblem(readyz, 503)
        for target in [thumb, "/thumb?url=\(Harness.encode(origin.url("/p.jpg")))&w=60", "/livez"] {
            let during = try await TestHTTPClient.sequence(
                port: port, requests: [Array("GET \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8)])
            #expect(during.responses.map(\.status) == [200], "\(target)")
            #expect(during.responses.first?.header("connection")?.lowercased() == "close", "\(target)")
            #expect(during.peerClosed, "\(target)")
        }
        #expect(thumbd.process.isRunning)

        thumbd.process.signal(SIGINT)  // SIGINT: the drain is cut short
        #expect(try await thumbd.exitStatus() == 0)
        let lines = thumbd.log.split(separator: "\n").map(String.init)
        let objects = lines.map { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(objects.allSatisfy { $0 != nil }, "\(lines)")
        let events = objects.compactMap { $0?["event"] as? String }
        #expect(events == ["settings", "start", "drain", "drain-end", "stopping", "stopped"], "\(events)")
        let drainEnd = objects.compactMap { $0 }.first { $0["event"] as? String == "drain-end" }
        #expect(drainEnd?["cut-short"] as? Bool == true)
        let drain = objects.compactMap { $0 }.first { $0["event"] as? String == "drain" }
        #expect(drain?["reason"] as? String == "SIGTERM" && drain?["delay"] as? Int == 600)
        // The requests of the drain were logged, as JSON too.
        #expect(objects.contains { $0?["route"] as? String == "/readyz" && $0?["status"] as? Int == 503 })
    }

    static func run(_ arguments: [String], environment: [String: String] = [:]) async throws -> (Int32, String, String)
    {
        let outcome = try await ChildProcess.run(binary.path, arguments, environment: environment)
        return (outcome.status, outcome.outputText, outcome.errorsText)
    }

    /// Blocking work on its own thread, never on the cooperative pool.
    static func onThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try work() }) }.start()
        }
    }
}

/// The real `thumbd`, started with `arguments`, its standard error collected as it comes.
final class RunningThumbd: Sendable {
    let process: ChildProcess
    private let collected = Locked<[UInt8]>([])
    private let finished = Atomic<Bool>(false)

    init(_ arguments: [String], environment: [String: String] = [:]) throws {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { throw SystemError(operation: "pipe", code: errno) }
        let reading = FileDescriptor(adopting: ends[0])
        do {
            let writing = FileDescriptor(adopting: ends[1])
            process = try ChildProcess(
                ProcessTests.binary.path, arguments, environment: environment, errors: .descriptor(writing.rawValue))
        }  // The write end closes here: the child has the only copy, so its exit ends the reads.
        Thread { [self] in
            while true {
                let chunk = ChildProcess.readSome(reading.rawValue)
                if chunk.isEmpty { break }
                collected.withLock { $0.append(contentsOf: chunk) }
            }
            finished.store(true, ordering: .releasing)
        }.start()
    }

    var log: String { String(decoding: collected.withLock { $0 }, as: UTF8.self) }

    /// The port from the `start` event ("… listening on 127.0.0.1:PORT"), waited for (bounded).
    func port() async throws -> Int {
        var port = 0
        _ = await eventually(within: .seconds(60)) {
            let tail = log.components(separatedBy: "listening on 127.0.0.1:")
            guard tail.count > 1 else { return finished.load(ordering: .acquiring) }
            port = Int(tail[1].prefix { $0.isNumber }) ?? 0
            return true
        }
        return try #require(port > 0 ? port : nil, "no start event: \(log)")
    }

    /// Waits for the exit (and the end of its standard error); its status, when it exited.
    func exitStatus() async throws -> Int32? {
        let termination = try await ProcessTests.onThread { [process] in process.wait() }
        _ = await eventually(within: .seconds(30)) { finished.load(ordering: .acquiring) }
        guard case .exited(let status) = termination else { return nil }
        return status
    }
}
