import Foundation
import Primitives
import TestSupport
import Testing
import ThumbnailCore

@testable import ThumbnailService

/// A running thumbd (port 0, real libvips, real sockets) in front of an in-process origin.
final class Harness: Sendable {
    let origin: TestOrigin
    /// The origin's routes: a test may change them while it runs.
    let routes: TestRoutes
    let app: ThumbnailApp

    /// The service's wall clock (Unix seconds): real time unless a test sets it.
    let clock = TestClock()
    /// The service's monotonic clock (freshness, remembered failures): stands still unless a test
    /// moves it, so lifetimes and max-ages are exact.
    let monotonic = MovableClock()

    init(
        routes: [String: TestOrigin.Reply] = [:], originHost: String = "127.0.0.1", log: LogCapture? = nil,
        start: Bool = true, sourceBase: String? = nil, _ configure: (inout ServiceConfiguration) -> Void = { _ in }
    ) throws {
        let table = TestRoutes(routes)
        self.routes = table
        origin = try TestOrigin(host: originHost) { table.reply(for: $0) }
        var configuration = ServiceConfiguration()
        configuration.server.port = 0
        configuration.fetch.allowLoopback = true
        configuration.logging.requests = false
        configuration.processing.workers = 2
        configuration.server.threads = 2
        configuration.cache.bytes = 64 << 20
        configuration.server.shutdownGrace = .seconds(3)
        // Generous deadlines for what a test holds on a gate (an origin's answer, a queued miss):
        // the test opens it on its next turns on the cooperative pool, and under a sanitizer other
        // tests can keep that busy for longer than the service's 20 s. Tests of a deadline set
        // their own.
        configuration.fetch.timeout = .seconds(300)
        configuration.processing.queueTimeout = .seconds(300)
        // `--source-base-url`: the origin, with this path (the framework routes' relative sources).
        if let sourceBase { configuration.fetch.sourceBaseURL = try SourceURL(parsing: origin.url(sourceBase)) }
        configure(&configuration)
        let clock = clock
        let monotonic = monotonic
        app = try ThumbnailApp(
            configuration: configuration, now: { clock.now }, clock: { monotonic.now }, logSink: log?.sink)
        // `start` false: listening, `/readyz` still "starting", until the test calls `announceReady()`.
        if start { try app.start() } else { try app.listen() }
    }

    deinit {
        app.shutdown()
        origin.stop()
    }

    var port: Int { app.port }

    /// `/thumb?url=<origin path, percent-encoded>&…`
    func thumb(_ path: String, _ params: String = "w=100") -> String {
        "/thumb?url=\(Self.encode(origin.url(path)))" + (params.isEmpty ? "" : "&\(params)")
    }

    func get(_ target: String, _ headers: [(String, String)] = [], method: String = "GET") async throws
        -> TestHTTPResponse
    {
        try await TestHTTPClient.request(method, port: port, target: target, headers: headers)
    }

    static func encode(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? text
    }
}

extension TestHTTPResponse {
    /// The decoded image, for dimension and pixel assertions.
    func image() throws -> DecodedImage { try Fixtures.decode(body) }

    /// The problem+json body as a dictionary.
    func problem() throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])
    }
}

/// Asserts a problem+json answer with this status (and the RFC 9457 members).
func expectProblem(_ response: TestHTTPResponse, _ status: Int, sourceLocation: SourceLocation = #_sourceLocation)
    throws
{
    #expect(response.status == status, "\(response.text)", sourceLocation: sourceLocation)
    #expect(response.header("content-type") == "application/problem+json", sourceLocation: sourceLocation)
    let problem = try response.problem()
    #expect(problem["status"] as? Int == status, sourceLocation: sourceLocation)
    #expect((problem["type"] as? String)?.hasPrefix("urn:thumbd:problem:") == true, sourceLocation: sourceLocation)
    #expect(problem["title"] is String, sourceLocation: sourceLocation)
    #expect(problem["detail"] is String, sourceLocation: sourceLocation)
    #expect(problem["requestId"] as? String == response.header("x-request-id"), sourceLocation: sourceLocation)
}

/// A wall clock a test can stop and move.
final class TestClock: Sendable {
    private let fixed = Locked<Double?>(nil)

    var now: Double { fixed.withLock { $0 } ?? Date().timeIntervalSince1970 }

    func set(_ seconds: Double) { fixed.withLock { $0 = seconds } }
}

/// A monotonic clock that moves only when a test moves it.
final class MovableClock: Sendable {
    private let offset = Locked<Duration>(.zero)
    private let start = ContinuousClock.now

    var now: ContinuousClock.Instant { start.advanced(by: offset.withLock { $0 }) }

    func advance(_ duration: Duration) { offset.withLock { $0 += duration } }
}
