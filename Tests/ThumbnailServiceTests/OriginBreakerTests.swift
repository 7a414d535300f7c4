import Foundation
import Primitives
import TestSupport
import Testing
import ThumbnailCore

@testable import ThumbnailService

/// The circuit breaker per origin, on an injected clock (no sleeps), and end to end against an
/// origin that closes every connection without an answer.
@Suite struct OriginBreakerTests {
    let origin = OriginKey(scheme: .http, host: "down.example", port: 80)

    final class Log: Sendable {
        private let events = Locked<[LogEvent]>([])
        func append(_ event: LogEvent) { events.withLock { $0.append(event) } }
        var entries: [String] { events.withLock { $0.map(\.message) } }
        var names: [String] { events.withLock { $0.map(\.name) } }
    }

    @Test func opensAfterFailuresInARowThenOneTrialAndAnAnswerClosesIt() {
        let clock = MovableClock()
        let log = Log()
        let breaker = OriginBreaker(threshold: 3, coolDown: .seconds(30), now: { clock.now }, log: log.append)
        for _ in 0..<2 { breaker.record(origin, .connectionFailure(timedOut: false)) }
        #expect(breaker.check(origin) == .proceed)
        breaker.record(origin, .connectionFailure(timedOut: false))
        guard case .refuse(let error) = breaker.check(origin) else {
            Issue.record("expected the breaker to be open")
            return
        }
        #expect(error.code == .originFailed)
        #expect(log.entries.count == 1 && log.entries[0].hasPrefix("circuit opened for http://down.example:80"))
        clock.advance(.seconds(29))
        #expect(breaker.check(origin) != .proceed)
        clock.advance(.seconds(1))
        // Cool-down over: one trial, the others still refused while it runs.
        #expect(breaker.check(origin) == .proceed)
        #expect(breaker.check(origin) != .proceed)
        breaker.record(origin, .connectionFailure(timedOut: true))
        // The trial failed (a timeout): another cool-down, answered 504 now.
        guard case .refuse(let again) = breaker.check(origin) else {
            Issue.record("expected the breaker to stay open")
            return
        }
        #expect(again.code == .originTimeout)
        clock.advance(.seconds(30))
        #expect(breaker.check(origin) == .proceed)
        breaker.record(origin, .answered)
        #expect(breaker.check(origin) == .proceed)
        #expect(breaker.check(origin) == .proceed)
        #expect(log.entries.count == 2 && log.entries[1].hasPrefix("circuit closed for http://down.example:80"))
        #expect(log.names == ["breaker-open", "breaker-close"])
        #expect(breaker.trackedOrigins == 0)
    }

    @Test func anAnswerEvenA5xxResetsTheCountAndInconclusiveOutcomesDoNotCount() {
        let clock = MovableClock()
        let breaker = OriginBreaker(threshold: 3, coolDown: .seconds(30), now: { clock.now }, log: { _ in })
        for _ in 0..<2 { breaker.record(origin, .connectionFailure(timedOut: false)) }
        breaker.record(origin, .answered)  // the fetcher records any HTTP status as an answer
        for _ in 0..<2 { breaker.record(origin, .connectionFailure(timedOut: false)) }
        for _ in 0..<5 { breaker.record(origin, .inconclusive) }
        #expect(breaker.check(origin) == .proceed)
        #expect(!breaker.isOpen(origin))
        breaker.record(origin, .connectionFailure(timedOut: false))
        #expect(breaker.isOpen(origin))
    }

    @Test func zeroTurnsItOffAndTheTableIsBounded() {
        let clock = MovableClock()
        let off = OriginBreaker(threshold: 0, coolDown: .seconds(30), now: { clock.now }, log: { _ in })
        for _ in 0..<100 { off.record(origin, .connectionFailure(timedOut: false)) }
        #expect(off.check(origin) == .proceed)
        #expect(off.trackedOrigins == 0)
        let bounded = OriginBreaker(
            threshold: 2, coolDown: .seconds(30), capacity: 8, now: { clock.now }, log: { _ in })
        for index in 0..<1000 {
            bounded.record(
                OriginKey(scheme: .http, host: "h\(index).example", port: 80), .connectionFailure(timedOut: false))
        }
        #expect(bounded.trackedOrigins <= 8)
    }

    @Test func aDeadOriginIsAnsweredAtOnceUntilItsTrialSucceeds() async throws {
        let photo = Fixtures.jpeg(width: 300, height: 200)
        let h = try Harness(routes: ["/a.jpg": .raw([]), "/b.jpg": .raw([]), "/c.jpg": .raw([])]) {
            $0.fetch.breakerFailures = 2
            $0.fetch.errorTTL = .zero  // every request would try again without the breaker
        }
        // Closed without an answer (CURLE_GOT_NOTHING): connection-level, twice in a row.
        try expectProblem(try await h.get(h.thumb("/a.jpg")), 502)
        try expectProblem(try await h.get(h.thumb("/b.jpg")), 502)
        #expect(h.app.fetcher.breaker.isOpen(try SourceURL(parsing: h.origin.url("/")).origin))
        // The pipeline's one metrics snapshot carries the breakers' states, and /metrics shows it.
        #expect(h.app.pipeline.metrics.fetches.origins == OriginHealth(open: 1))
        let page = try await h.get("/metrics").text
        #expect(page.contains("thumbd_origin_breakers{state=\"open\"} 1\n"), "\(page)")
        // Open: answered at once, the origin never asked.
        try expectProblem(try await h.get(h.thumb("/c.jpg")), 502)
        try expectProblem(try await h.get(h.thumb("/a.jpg")), 502)
        #expect(h.origin.requestCount(path: "/c.jpg") == 0)
        #expect(h.origin.requestCount(path: "/a.jpg") == 1)
        // The origin is back; after the cool-down one trial goes through and closes it.
        h.routes.set("/c.jpg", .ok(photo))
        h.monotonic.advance(.seconds(30))
        #expect(try await h.get(h.thumb("/c.jpg")).status == 200)
        #expect(!h.app.fetcher.breaker.isOpen(try SourceURL(parsing: h.origin.url("/")).origin))
        #expect(h.app.pipeline.metrics.fetches.origins == OriginHealth())
    }

    @Test func anOriginThatTimesOutIsAnswered504AtOnce() async throws {
        let h = try Harness(routes: ["/slow.jpg": .hang, "/other.jpg": .hang]) {
            $0.fetch.breakerFailures = 1
            $0.fetch.errorTTL = .zero
            $0.fetch.timeout = .milliseconds(300)
        }
        try expectProblem(try await h.get(h.thumb("/slow.jpg")), 504)
        // Open after one deadline miss: a timeout, so 504, and the origin is not asked.
        let refused = try await h.get(h.thumb("/other.jpg"))
        try expectProblem(refused, 504)
        #expect(try refused.problem()["type"] as? String == "urn:thumbd:problem:origin-timeout")
        #expect(h.origin.requestCount(path: "/other.jpg") == 0)
    }

    @Test func anOriginAnswering5xxNeverOpensIt() async throws {
        let h = try Harness(routes: ["/e.jpg": .status(503)]) {
            $0.fetch.breakerFailures = 2
            $0.fetch.errorTTL = .zero
        }
        for _ in 0..<4 { try expectProblem(try await h.get(h.thumb("/e.jpg")), 502) }
        #expect(h.origin.requestCount(path: "/e.jpg") == 4)
    }
}
