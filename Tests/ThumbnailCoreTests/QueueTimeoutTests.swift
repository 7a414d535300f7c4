import Dispatch
import Synchronization
import TestSupport
import Testing

@testable import ThumbnailCore

/// Under a burst of heavy sources the queue must not hold clients for minutes: a job still queued
/// after `queueTimeout` is answered 503 (`queueFull`) instead of being run, and a fetch that got no
/// working memory within its deadline is 503 too (we were busy), not 504 (the origin was not slow).
@Suite struct QueueTimeoutTests {
    let first = "http://origin.example/first.jpg"
    let second = "http://origin.example/second.jpg"

    /// A pipeline on `clock`, answering the thumbnail's own text.
    func makePipeline(
        _ clock: FakeClock, _ fetcher: FakeFetcher, _ imaging: FakeImaging, _ workers: WorkerPool,
        _ limits: FakePipeline.Limits
    ) -> FakePipeline {
        FakePipeline(
            cache: ImageCache<FakePipeline.Entry>(budget: 10_000_000), workers: workers, fetcher: fetcher,
            imaging: imaging, limits: limits, now: { clock.now }
        ) { image, _, _ in String(decoding: image.bytes.array, as: UTF8.self) }
    }

    /// The deadline is the pool's timer: the queued job hears 503 while the only worker is still
    /// held on the gate (nothing else could wake the queue).
    @Test func aJobQueuedPastTheTimeoutIsAnswered503WhileTheWorkersAreHeld() async throws {
        let clock = FakeClock()
        let imaging = FakeImaging(gate: Gate(open: false))
        let fetcher = FakeFetcher([first: .success([100, 50]), second: .success([100, 50])])
        let pool = WorkerPool(workers: 1, queueCapacity: 4, queueTimeout: .milliseconds(200))
        let pipeline = makePipeline(clock, fetcher, imaging, pool, .test())
        let firstRequest = try request(first)
        async let running = pipeline.thumbnail(firstRequest)
        #expect(await eventually(pipeline.metrics) { $0.workers.running == 1 })
        let (late, _) = await pipeline.thumbnail(try request(second))
        guard case .failure(let error) = late else {
            Issue.record("expected a 503 for the job that waited past the timeout")
            return
        }
        #expect(error.code == .queueFull)
        #expect(pipeline.metrics.workers.running == 1)  // the first is still held: the timer answered
        #expect(pipeline.metrics.workers.queuedInteractive == 0)
        #expect(pipeline.metrics.workers.expiredInQueue == 1)
        #expect(pipeline.metrics.renders.expiredInQueue == 1)
        imaging.gate.open()
        let (done, _) = await running
        #expect(try text(done) == "w=100,h=50")
        #expect(imaging.encodes == 1)  // the late job never ran
        #expect(await eventually(pipeline.metrics) { $0.workers.admitted == 0 })
    }

    @Test func aJobWithinTheTimeoutRuns() async throws {
        let clock = FakeClock()
        let imaging = FakeImaging(gate: Gate(open: false))
        let fetcher = FakeFetcher([first: .success([100, 50]), second: .success([100, 50])])
        let pipeline = makePipeline(
            clock, fetcher, imaging, WorkerPool(workers: 1, queueCapacity: 4, queueTimeout: .seconds(20)), .test())
        let firstRequest = try request(first)
        async let running = pipeline.thumbnail(firstRequest)
        #expect(await eventually(pipeline.metrics) { $0.workers.running == 1 })
        let secondRequest = try request(second)
        async let queued = pipeline.thumbnail(secondRequest)
        #expect(await eventually(pipeline.metrics) { $0.workers.queuedInteractive == 1 })
        imaging.gate.open()
        _ = await running
        let (result, _) = await queued
        #expect(try text(result) == "w=100,h=50")
        #expect(pipeline.metrics.renders.expiredInQueue == 0)
    }

    @Test func noWorkingMemoryWithinTheFetchDeadlineIs503NotAnOriginTimeout() async throws {
        let clock = FakeClock()
        let fetcher = FakeFetcher([first: .success([100, 50])])
        let pool = WorkerPool(workers: 1, queueCapacity: 4, workBudget: 8 << 20)
        let pipeline = makePipeline(clock, fetcher, FakeImaging(), pool, .test(fetchTimeout: .seconds(20)))
        // Originals waiting for their jobs (played by one charge) fill the budget past the deadline.
        let waiting = pool.charge(8 << 20)
        let firstRequest = try request(first)
        async let done = pipeline.thumbnail(firstRequest)
        #expect(await eventually(pipeline.metrics) { $0.workers.waitingForRoom == 1 })
        clock.advance(.seconds(21))
        waiting.end()
        let (result, _) = await done
        guard case .failure(let error) = result else {
            Issue.record("expected a 503")
            return
        }
        #expect(error.code == .queueFull)
        #expect(fetcher.total == 0)
        #expect(pipeline.metrics.renders.noRoomInTime == 1)
    }

    @Test func aFetchSlotWaitSpentBehindFetchesWaitingForMemoryIs503() async throws {
        let clock = FakeClock()
        let fetcher = FakeFetcher([first: .success([100, 50]), second: .success([100, 50])])
        let pool = WorkerPool(workers: 1, queueCapacity: 4, workBudget: 8 << 20)
        let pipeline = makePipeline(
            clock, fetcher, FakeImaging(), pool, .test(maxFetchesPerOrigin: 1, fetchTimeout: .seconds(20)))
        let waiting = pool.charge(8 << 20)
        // The first holds the origin's one slot while it waits for memory; the second waits for
        // the slot. Both deadlines pass; then memory frees.
        let firstRequest = try request(first)
        async let holder = pipeline.thumbnail(firstRequest)
        #expect(await eventually(pipeline.metrics) { $0.workers.waitingForRoom == 1 })
        let secondRequest = try request(second)
        async let behind = pipeline.thumbnail(secondRequest)
        #expect(await eventually(pipeline.metrics) { $0.fetches.waitingForOriginSlot == 1 })
        clock.advance(.seconds(21))
        waiting.end()
        for (result, _) in [await holder, await behind] {
            guard case .failure(let error) = result else {
                Issue.record("expected a 503")
                continue
            }
            #expect(error.code == .queueFull, "\(error)")
        }
        #expect(fetcher.total == 0)
    }
}
