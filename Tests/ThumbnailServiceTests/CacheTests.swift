import Foundation
import TestSupport
import Testing
import ThumbnailCore

@testable import ThumbnailService

/// Cache hits, reuse of originals, coalescing, only-if-cached, prefetch, the queue bound.
@Suite struct CacheTests {
    static let photo = Fixtures.jpeg(width: 640, height: 480)

    @Test func hitAfterMissWithoutFetchingAgain() async throws {
        let h = try Harness(routes: ["/p.jpg": .ok(Self.photo)])
        let first = try await h.get(h.thumb("/p.jpg", "w=200"))
        #expect(first.header("x-cache") == "miss")
        let second = try await h.get(h.thumb("/p.jpg", "w=200"))
        #expect(second.header("x-cache") == "hit")
        #expect(second.body == first.body)
        #expect(h.origin.requestCount(path: "/p.jpg") == 1)
        // Another width reuses the cached original.
        let other = try await h.get(h.thumb("/p.jpg", "w=120"))
        #expect(other.status == 200)
        #expect(try other.image().width == 120)
        #expect(h.origin.requestCount(path: "/p.jpg") == 1)
        #expect(h.app.pipeline.metrics.fetches.started == 1)
    }

    @Test func aCachedThumbnailIsChargedItsReadyMadeResponsesToo() async throws {
        let h = try Harness(routes: ["/p.jpg": .ok(Self.photo)])
        let miss = try await h.get(h.thumb("/p.jpg", "w=40"))
        #expect(miss.status == 200)
        let variant = h.app.pipeline.metrics.cache[.variant]
        #expect(variant.entries == 1)
        // The two prepared responses hold more than a small thumbnail's bytes: charged, the
        // budget bounds them.
        let prepared = variant.bytes - miss.body.count - ImageCache<Pipeline.Entry>.perEntryOverhead
        #expect(prepared > miss.body.count)
        #expect(prepared == 128 + (384 + 4 * 160) + (384 + 3 * 160))
    }

    @Test func fiftyConcurrentRequestsCauseOneFetchAndOneResize() async throws {
        let gate = TestGate()
        let h = try Harness(routes: ["/p.jpg": .gated(gate, .ok(Self.photo))])
        async let results = TestHTTPClient.concurrent(50, port: h.port, target: h.thumb("/p.jpg", "w=150"))
        // The origin answers only once all fifty have joined the one job.
        #expect(await eventually { h.app.pipeline.metrics.coalesced == 49 })
        gate.open()
        let responses = try await results.map { try $0.get() }
        #expect(responses.allSatisfy { $0.status == 200 })
        #expect(Set(responses.map(\.body)).count == 1)
        #expect(h.origin.requestCount(path: "/p.jpg") == 1)
        #expect(h.app.pipeline.metrics.renders.thumbnails == 1)
        let outcomes = responses.compactMap { $0.header("x-cache") }
        #expect(outcomes.filter { $0 == "miss" }.count == 1)
        #expect(outcomes.filter { $0 == "coalesced" }.count == 49)
    }

    @Test func concurrentWidthsOfOneNewSourceFetchItOnce() async throws {
        let gate = TestGate()
        let h = try Harness(routes: ["/p.jpg": .gated(gate, .ok(Self.photo))]) { $0.processing.queueCapacity = 16 }
        async let statuses = withThrowingTaskGroup(of: Int.self) { group in
            for width in stride(from: 100, to: 200, by: 10) {
                group.addTask { try await h.get(h.thumb("/p.jpg", "w=\(width)")).status }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        // All ten are admitted (each waits on the one fetch) before the origin answers.
        #expect(await eventually { h.app.pipeline.metrics.workers.admitted == 10 })
        gate.open()
        #expect(try await statuses == Array(repeating: 200, count: 10))
        #expect(h.origin.requestCount(path: "/p.jpg") == 1)
        #expect(h.app.pipeline.metrics.renders.thumbnails == 10)
    }

    @Test func onlyIfCachedAnswersFromTheCacheOrNotAtAll() async throws {
        let h = try Harness(routes: ["/p.jpg": .ok(Self.photo)])
        let cold = try await h.get(h.thumb("/p.jpg"), [("Cache-Control", "only-if-cached")])
        try expectProblem(cold, 504)
        #expect(h.origin.totalRequests == 0)
        _ = try await h.get(h.thumb("/p.jpg"))
        let warm = try await h.get(h.thumb("/p.jpg"), [("Cache-Control", "max-age=0, only-if-cached")])
        #expect(warm.status == 200)
        #expect(h.origin.totalRequests == 1)
    }

    @Test func prefetchLoadsInTheBackground() async throws {
        let h = try Harness(routes: ["/p.jpg": .ok(Self.photo), "/q.jpg": .ok(Self.photo)])
        let accepted = try await h.get("/prefetch?url=\(Harness.encode(h.origin.url("/p.jpg")))&w=160", method: "POST")
        #expect(accepted.status == 202)
        let arrived = await eventually {
            (try? await h.get(h.thumb("/p.jpg", "w=160"), [("Cache-Control", "only-if-cached")]).status) == 200
        }
        #expect(arrived)
        // The original alone.
        let original = try await h.get("/prefetch?url=\(Harness.encode(h.origin.url("/q.jpg")))", method: "POST")
        #expect(original.status == 202)
        #expect(
            await eventually {
                h.origin.requestCount(path: "/q.jpg") == 1 && h.app.pipeline.metrics.workers.admitted == 0
            })
        let thumb = try await h.get(h.thumb("/q.jpg", "w=90"))
        #expect(thumb.status == 200)
        #expect(h.origin.requestCount(path: "/q.jpg") == 1)
        let bad = try await h.get("/prefetch?w=10", method: "POST")
        try expectProblem(bad, 400)
    }

    @Test func fullQueueGives503WhileHitsAreStillServed() async throws {
        let gate = TestGate()
        let h = try Harness(
            routes: [
                "/warm.jpg": .ok(Self.photo), "/slow.jpg": .gated(gate, .ok(Self.photo)),
                "/other.jpg": .ok(Self.photo),
            ]
        ) {
            $0.processing.workers = 1
            $0.processing.queueCapacity = 0
            $0.server.retryAfter = .seconds(2)
        }
        #expect(try await h.get(h.thumb("/warm.jpg")).status == 200)
        async let slow = h.get(h.thumb("/slow.jpg"))
        #expect(await eventually { h.app.pipeline.metrics.workers.admitted == 1 })
        let refused = try await h.get(h.thumb("/other.jpg"))
        try expectProblem(refused, 503)
        #expect(refused.header("retry-after") == "2")
        #expect(h.origin.requestCount(path: "/other.jpg") == 0)
        let hit = try await h.get(h.thumb("/warm.jpg"))
        #expect(hit.status == 200)
        #expect(hit.header("x-cache") == "hit")
        gate.open()
        #expect(try await slow.status == 200)
        #expect(try await h.get(h.thumb("/other.jpg")).status == 200)
    }

    @Test func cacheBudgetHoldsUnderTraffic() async throws {
        let budget = 40_000
        let h = try Harness(routes: ["/p.jpg": .ok(Self.photo)]) { $0.cache.bytes = budget }
        for width in stride(from: 100, through: 400, by: 5) {
            #expect(try await h.get(h.thumb("/p.jpg", "w=\(width)&format=webp")).status == 200)
            #expect(h.app.pipeline.metrics.cache.total.bytes <= budget)
        }
        #expect(h.app.pipeline.metrics.cache.total.evictions > 0)
    }
}
