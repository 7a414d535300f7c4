import Foundation
import Primitives
import TestSupport
import Testing

@testable import ThumbnailCore

/// Per-origin fetch slots: at most `limit` fetches per origin, waiters served in order, a waiter
/// past its deadline told so, no entry left behind; and a stalled origin holds no place in the pool.
@Suite struct OriginLimitTests {
    let stalled = OriginKey(scheme: .http, host: "stalled.example", port: 80)
    let other = OriginKey(scheme: .http, host: "other.example", port: 80)

    @Test func theOriginIsSchemeHostAndPort() throws {
        #expect(
            try SourceURL(parsing: "http://a.example/x.jpg").origin
                == OriginKey(scheme: .http, host: "a.example", port: 80))
        #expect(try SourceURL(parsing: "https://a.example/x.jpg").origin.port == 443)
        #expect(
            try SourceURL(parsing: "http://a.example:8080/x").origin != SourceURL(parsing: "http://a.example/x").origin)
        #expect(try SourceURL(parsing: "http://localhost/x").origin != SourceURL(parsing: "http://127.0.0.1/x").origin)
    }

    @Test func atMostTheLimitRunAndWaitersAreServedInOrder() {
        let clock = FakeClock()
        let slots = OriginSlots(limit: 2, wait: .seconds(20), now: { clock.now })
        let first = slots.tryAcquire(stalled)
        let second = slots.tryAcquire(stalled)
        #expect(first != nil && second != nil)
        #expect(slots.tryAcquire(stalled) == nil)
        // Another origin is not affected.
        let elsewhere = slots.tryAcquire(other)
        #expect(elsewhere != nil)
        let granted = OrderLog()
        let held = Locked<[OriginSlots.Slot]>([])
        for name in ["a", "b"] {
            slots.acquire(stalled) { slot in
                granted.append(slot == nil ? "\(name): timeout" : name)
                if let slot { held.withLock { $0.append(slot) } }
            }
        }
        #expect(granted.entries.isEmpty)
        #expect(slots.load(of: stalled) == (2, 2))
        // A new request does not jump the queue.
        #expect(slots.tryAcquire(stalled) == nil)
        first!.release()
        first!.release()  // once only
        #expect(granted.entries == ["a"])
        second!.release()
        #expect(granted.entries == ["a", "b"])
        held.withLock { slots in slots.forEach { $0.release() } }
        elsewhere!.release()
        #expect(slots.originCount == 0)
    }

    @Test func aWaiterPastItsDeadlineIsToldSoAndTheNextOneServed() {
        let clock = FakeClock()
        let slots = OriginSlots(limit: 1, wait: .seconds(20), now: { clock.now })
        let running = slots.tryAcquire(stalled)!
        let heard = OrderLog()
        slots.acquire(stalled) { heard.append($0 == nil ? "early: timeout" : "early") }
        clock.advance(.seconds(10))
        let late = Locked<OriginSlots.Slot?>(nil)
        slots.acquire(stalled) { slot in
            heard.append(slot == nil ? "late: timeout" : "late")
            late.withLock { $0 = slot }
        }
        clock.advance(.seconds(11))  // past the early waiter's deadline, not the late one's
        running.release()
        #expect(heard.entries == ["early: timeout", "late"])
        let slot = late.withLock { $0 }
        // The late waiter's slot carries its own deadline: the fetch gets only what is left.
        #expect(slot.map { $0.deadline - clock.now } == .seconds(9))
        slot?.release()
        #expect(slots.originCount == 0)
    }

    @Test func aRequestThatWaitedPastTheFetchDeadlineIsA504() async throws {
        let clock = FakeClock()
        let fetcher = PerHostFetcher(stalledHost: "stalled.example")
        let pipeline = FakePipeline(
            cache: ImageCache<FakePipeline.Entry>(budget: 10_000_000),
            workers: WorkerPool(workers: 1, queueCapacity: 4), fetcher: fetcher, imaging: FakeImaging(),
            limits: .test(maxFetchesPerOrigin: 1, fetchTimeout: .seconds(20)), now: { clock.now }
        ) { image, _, _ in String(decoding: image.bytes.array, as: UTF8.self) }
        let first = try request("http://stalled.example/1.jpg")
        let second = try request("http://stalled.example/2.jpg")
        async let firstResult = pipeline.thumbnail(first)
        #expect(await eventually(pipeline.metrics) { $0.fetches.holdingOriginSlot == 1 })
        async let secondResult = pipeline.thumbnail(second)
        #expect(await eventually(pipeline.metrics) { $0.fetches.waitingForOriginSlot == 1 })
        clock.advance(.seconds(21))
        fetcher.gate.open()
        #expect(try text(await firstResult.0) == "w=100,h=50")
        guard case .failure(let error) = await secondResult.0 else {
            Issue.record("expected a timeout")
            return
        }
        #expect(error.code == .originTimeout)
        #expect(fetcher.started(host: "stalled.example") == 1)
    }

    @Test func requestsWaitingForAStalledOriginHoldNoPlaceInThePool() async throws {
        let fetcher = PerHostFetcher(stalledHost: "stalled.example")
        let pipeline = FakePipeline(
            cache: ImageCache<FakePipeline.Entry>(budget: 10_000_000),
            workers: WorkerPool(workers: 1, queueCapacity: 4), fetcher: fetcher, imaging: FakeImaging(),
            limits: .test(maxFetchesPerOrigin: 2)
        ) { image, _, _ in String(decoding: image.bytes.array, as: UTF8.self) }
        // Ten sources on the stalled origin: more than the pool's five places.
        let stalledRequests = try (0..<10).map { try request("http://stalled.example/\($0).jpg") }
        async let stalledResults = withTaskGroup(of: ThumbnailError.Code?.self) { group in
            for req in stalledRequests {
                group.addTask {
                    guard case .failure(let error) = await pipeline.thumbnail(req).0 else { return nil }
                    return error.code
                }
            }
            return await group.reduce(into: [ThumbnailError.Code?]()) { $0.append($1) }
        }
        #expect(await eventually { pipeline.originSlots.load(of: stalled) == (2, 8) })
        #expect(fetcher.started(host: "stalled.example") == 2)
        // Only the two fetching hold a place; another origin's request is served meanwhile.
        #expect(pipeline.metrics.workers.admitted == 2)
        let (result, _) = await pipeline.thumbnail(try request("http://other.example/a.jpg"))
        #expect(try text(result) == "w=100,h=50")
        fetcher.gate.open()
        // A waiter granted its slot takes a place in the pool again then: it is made, or — when
        // the five places are taken by the renders just released — told 503 like any newcomer.
        let results = await stalledResults
        #expect(results.allSatisfy { $0 == nil || $0 == .queueFull })
        #expect(results.filter { $0 == nil }.count >= 2)
        #expect(fetcher.started(host: "stalled.example") == results.filter { $0 == nil }.count)
        #expect(fetcher.mostAtOnce(host: "stalled.example") == 2)
        #expect(await eventually(pipeline.metrics) { $0.workers.admitted == 0 })
        #expect(pipeline.originSlots.originCount == 0)
    }
}

/// Answers every URL with a 100 × 50 "image"; fetches to `stalledHost` wait for `gate`. Counts
/// fetches started and the most running at once, per host.
final class PerHostFetcher: ImageFetching {
    let gate = Gate()
    let stalledHost: String
    private let counts = Locked<(started: [String: Int], running: [String: Int], most: [String: Int])>(([:], [:], [:]))

    init(stalledHost: String) { self.stalledHost = stalledHost }

    func started(host: String) -> Int { counts.withLock { $0.started[host] ?? 0 } }
    func mostAtOnce(host: String) -> Int { counts.withLock { $0.most[host] ?? 0 } }

    func fetch(
        _ url: SourceURL, revalidating validators: SourceValidators?,
        completion: @escaping @Sendable (Result<FetchedSource, ThumbnailError>) -> Void
    ) {
        let host = url.host
        counts.withLock { counts in
            counts.started[host, default: 0] += 1
            counts.running[host, default: 0] += 1
            counts.most[host] = max(counts.most[host] ?? 0, counts.running[host]!)
        }
        let answer: @Sendable () -> Void = { [self] in
            counts.withLock { $0.running[host]! -= 1 }
            completion(.success(.modified(ImageBytes([10, 5]), OriginDirectives())))
        }
        if host == stalledHost {
            gate.whenOpen { DispatchQueue.global().async(execute: answer) }
        } else {
            DispatchQueue.global().async(execute: answer)
        }
    }
}
