import Foundation
import TestSupport
import Testing
import ThumbnailCore

@testable import ThumbnailService

/// `--max-fetches-per-host`: a stalled origin gets at most that many fetches, and the requests
/// waiting for it hold no worker and no place in the queue, so another origin is served meanwhile.
/// "Host" is the origin: scheme, host and port — the two origins here differ by port.
@Suite struct PerHostLimitTests {
    @Test func aStalledOriginWithFortyRequestsDoesNotDelayAnotherOrigin() async throws {
        let photo = Fixtures.jpeg(width: 300, height: 200)
        let gate = TestGate()
        let stalled = try TestOrigin { _ in .gated(gate, .ok(photo)) }
        defer { stalled.stop() }
        // 2 workers + 16 queued = 18 places: fewer than the 40 requests to the stalled origin.
        let h = try Harness(routes: ["/fast.jpg": .ok(photo)]) {
            $0.fetch.maxFetchesPerHost = 8
            $0.processing.queueCapacity = 16
        }
        let targets = (0..<40).map { "/thumb?url=\(Harness.encode(stalled.url("/\($0).jpg")))&w=100" }
        async let stalledAnswers = withThrowingTaskGroup(of: TestHTTPResponse.self) { group in
            for target in targets { group.addTask { try await h.get(target) } }
            return try await group.reduce(into: [TestHTTPResponse]()) { $0.append($1) }
        }
        #expect(
            await eventually {
                let fetches = h.app.pipeline.metrics.fetches
                return (fetches.holdingOriginSlot, fetches.waitingForOriginSlot, fetches.busyOrigins) == (8, 32, 1)
            })
        // Holding a slot is not yet being at the origin: curl may still be connecting.
        #expect(await eventually { (0..<40).reduce(0) { $0 + stalled.requestCount(path: "/\($1).jpg") } == 8 })
        #expect(h.app.pipeline.metrics.workers.admitted == 8)
        // Another origin while the first is stalled: answered, not 503, not waiting for the gate.
        let fast = try await h.get(h.thumb("/fast.jpg"))
        #expect(fast.status == 200)
        #expect(h.origin.requestCount(path: "/fast.jpg") == 1)
        gate.open()
        let answers = try await stalledAnswers
        // Each waiter takes a place again when its slot frees: made, or 503 + Retry-After if the
        // places are taken at that moment — never reset, never 500.
        #expect(answers.allSatisfy { $0.status == 200 || ($0.status == 503 && $0.header("retry-after") != nil) })
        #expect(answers.filter { $0.status == 200 }.count >= 8)
        #expect(await eventually { h.app.pipeline.metrics.fetches.busyOrigins == 0 })
    }
}
