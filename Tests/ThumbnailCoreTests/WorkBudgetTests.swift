import Foundation
import Primitives
import TestSupport
import Testing

@testable import ThumbnailCore

/// The working-memory budget: jobs start only when their estimate fits, outside charges count,
/// background work yields, and an estimate over the whole budget is refused without decoding.
@Suite struct WorkBudgetTests {
    let photo = "http://origin.example/photo.jpg"

    /// The budget's own rules, without threads: a sized job starts when it fits or when no other
    /// sized job runs (so outside charges alone never starve every job).
    @Test func aSizedJobStartsWhenItFitsOrRunsAlone() {
        var budget = WorkBudget(limit: 100)
        budget.adjust(by: 70)  // an original waiting for its job
        #expect(budget.mayStart(costing: 500))  // nothing sized runs: it may start, alone
        budget.startJob(costing: 20)
        #expect(budget.inUse == 90 && budget.runningJobs == 1)
        #expect(budget.mayStart(costing: 10))
        #expect(!budget.mayStart(costing: 11))
        budget.endJob(costing: 20)
        #expect(budget.inUse == 70 && budget.runningJobs == 0)
    }

    /// A fetch that fits still waits behind fetches already waiting; room goes to interactive
    /// fetches first, each charged its reservation as it is taken out.
    @Test func waitingFetchesKeepTheirOrder() {
        var budget = WorkBudget(limit: 100)
        let none: @Sendable (WorkerPool.Charge) -> Void = { _ in }
        let asked = [(80, .interactive), (60, .background), (20, .background), (30, .interactive)].map {
            (bytes: Int, priority: WorkerPool.Priority) in
            budget.chargeOrWait(.init(bytes: bytes, start: none), priority)
        }
        // The first is charged at once; 20 would fit beside 80, but others wait before it.
        #expect(asked == [true, false, false, false])
        #expect(budget.waitingCount == 3 && budget.inUse == 80)
        budget.adjust(by: -80)
        let first = budget.takeWaitersThatFit().map(\.bytes)
        #expect(first == [30, 60])  // 30 + 60 fit; 20 more would not
        #expect(budget.inUse == 90 && budget.waitingCount == 1)
        budget.adjust(by: -90)
        let second = budget.takeWaitersThatFit().map(\.bytes)
        #expect(second == [20])
    }

    @Test func aJobWaitsInTheQueueUntilItsEstimateFits() async throws {
        let pool = WorkerPool(workers: 2, queueCapacity: 8, workBudget: 100)
        let order = OrderLog()
        let gate = DispatchSemaphore(value: 0)
        pool.reserve(.interactive)!.run(costing: { 80 }) {
            gate.wait()
        } then: {
        }
        #expect(await eventually(pool.statistics) { $0.runningCharged == 1 && $0.workInUse == 80 })
        pool.reserve(.interactive)!.run(costing: { 50 }) {
            order.append("B")
        } then: {
        }
        // B was sized by the idle worker and put back: 80 + 50 is over 100.
        #expect(await eventually(pool.statistics) { $0.queuedInteractive == 1 && $0.running == 1 })
        #expect(order.entries.isEmpty)
        #expect(pool.statistics.workInUse == 80)
        gate.signal()
        #expect(await eventually(pool.statistics) { $0.admitted == 0 })
        #expect(order.entries == ["B"])
        #expect(pool.statistics.workInUse == 0)
        #expect(pool.statistics.workBudget == 100)
    }

    @Test func outsideChargesCountUntilTheyEnd() async throws {
        let pool = WorkerPool(workers: 2, queueCapacity: 8, workBudget: 100)
        let order = OrderLog()
        let original = pool.charge(60)
        let gate = DispatchSemaphore(value: 0)
        pool.reserve(.interactive)!.run(costing: { 30 }) {
            gate.wait()
        } then: {
        }
        #expect(await eventually(pool.statistics) { $0.runningCharged == 1 && $0.workInUse == 90 })
        pool.reserve(.interactive)!.run(costing: { 20 }) {
            order.append("B")
        } then: {
        }
        #expect(await eventually(pool.statistics) { $0.queuedInteractive == 1 })
        #expect(order.entries.isEmpty)
        original.update(70)
        #expect(pool.statistics.workInUse == 100)
        original.end()
        original.update(999)  // ended: ignored
        #expect(await eventually(pool.statistics) { $0.queuedInteractive == 0 && order.entries == ["B"] })
        gate.signal()
        #expect(await eventually(pool.statistics) { $0.admitted == 0 && $0.workInUse == 0 })
    }

    @Test func backgroundWorkYieldsToInteractiveWorkWaitingForMemory() async throws {
        let pool = WorkerPool(workers: 2, queueCapacity: 8, workBudget: 100)
        let order = OrderLog()
        let gate = DispatchSemaphore(value: 0)
        pool.reserve(.interactive)!.run(costing: { 80 }) {
            gate.wait()
        } then: {
        }
        #expect(await eventually(pool.statistics) { $0.runningCharged == 1 })
        pool.reserve(.interactive)!.run(costing: { 50 }) {
            order.append("interactive")
        } then: {
        }
        #expect(await eventually(pool.statistics) { $0.queuedInteractive == 1 })
        // Would fit (80 + 10), but an interactive job is waiting for memory: it goes first.
        pool.reserve(.background)!.run(costing: { 10 }) {
            order.append("background")
        } then: {
        }
        #expect(pool.statistics.queuedBackground == 1)
        #expect(order.entries.isEmpty)
        gate.signal()
        // Both run now (two workers: which one finishes first is theirs to decide).
        #expect(await eventually(pool.statistics) { $0.admitted == 0 })
        #expect(order.entries.sorted() == ["background", "interactive"])
    }

    @Test func aJobThatDoesNotFitStillRunsWhenNothingElseRuns() async throws {
        // Waiting originals may hold most of the budget; if no job ran, none would ever end.
        let pool = WorkerPool(workers: 1, queueCapacity: 8, workBudget: 100)
        let held = pool.charge(90)
        let ran = OrderLog()
        pool.reserve(.interactive)!.run(costing: { 50 }) {
            ran.append("job")
        } then: {
        }
        #expect(await eventually(pool.statistics) { $0.admitted == 0 })
        #expect(ran.entries == ["job"])
        held.end()
    }

    @Test func anEstimateOverTheWholeBudgetIsRefusedWithoutDecoding() async throws {
        let fetcher = FakeFetcher([photo: .success([250, 250])])
        let imaging = FakeImaging()
        let pipeline = FakePipeline(
            cache: ImageCache<FakePipeline.Entry>(budget: 10_000_000),
            workers: WorkerPool(workers: 1, queueCapacity: 4, workBudget: 1 << 20), fetcher: fetcher,
            imaging: imaging, limits: .test()
        ) { image, _, _ in String(decoding: image.bytes.array, as: UTF8.self) }
        let (result, _) = await pipeline.thumbnail(try request(photo))
        guard case .failure(let error) = result else {
            Issue.record("expected a refusal")
            return
        }
        #expect(error.code == .tooMuchMemory)
        #expect(imaging.encodes == 0)
        #expect(pipeline.metrics.renders.failed[.tooMuchMemory] == 1)
        #expect(pipeline.metrics.workers.workInUse == 0)
    }

    @Test func aFetchInProgressCountsByWhatItReported() async throws {
        let fetcher = ReportingFetcher(body: [100, 50], reported: 700_000)
        let pipeline = FakePipeline(
            cache: ImageCache<FakePipeline.Entry>(budget: 10_000_000),
            workers: WorkerPool(workers: 1, queueCapacity: 4, workBudget: 64 << 20), fetcher: fetcher,
            imaging: FakeImaging(), limits: .test()
        ) { image, _, _ in String(decoding: image.bytes.array, as: UTF8.self) }
        let req = try request(photo)
        async let done = pipeline.thumbnail(req)
        #expect(await eventually(pipeline.metrics) { $0.workers.workInUse == 700_000 })
        #expect(pipeline.metrics.workers.workBudget == 64 << 20)
        fetcher.gate.open()
        let (result, _) = await done
        #expect(try text(result) == "w=100,h=50")
        #expect(await eventually(pipeline.metrics) { $0.workers.workInUse == 0 && $0.workers.admitted == 0 })
    }

    @Test func aFetchStartsOnlyWhenTheBudgetHasRoom() async throws {
        let fetcher = FakeFetcher([photo: .success([100, 50])])
        let pool = WorkerPool(workers: 1, queueCapacity: 4, workBudget: 8 << 20)
        let pipeline = FakePipeline(
            cache: ImageCache<FakePipeline.Entry>(budget: 10_000_000), workers: pool, fetcher: fetcher,
            imaging: FakeImaging(), limits: .test()
        ) { image, _, _ in String(decoding: image.bytes.array, as: UTF8.self) }
        // Originals waiting for their jobs (played by one charge) fill the budget.
        let waiting = pool.charge(8 << 20)
        let req = try request(photo)
        async let done = pipeline.thumbnail(req)
        #expect(await eventually(pipeline.metrics) { $0.workers.waitingForRoom == 1 })
        #expect(fetcher.total == 0)
        waiting.update(7 << 20)  // room again: the fetch starts, charged its reservation
        let (result, _) = await done
        #expect(try text(result) == "w=100,h=50")
        #expect(fetcher.total == 1)
        #expect(await eventually(pipeline.metrics) { $0.workers.workInUse == 7 << 20 && $0.workers.admitted == 0 })
        waiting.end()
    }

    @Test func roomGoesToInteractiveFetchesFirst() {
        let pool = WorkerPool(workers: 1, queueCapacity: 4, workBudget: 100)
        let full = pool.charge(100)
        let order = OrderLog()
        let charges = Locked<[WorkerPool.Charge]>([])
        pool.whenRoom(.background, reserving: 60) { charge in
            order.append("background")
            charges.withLock { $0.append(charge) }
        }
        pool.whenRoom(.interactive, reserving: 60) { charge in
            order.append("interactive")
            charges.withLock { $0.append(charge) }
        }
        #expect(pool.statistics.waitingForRoom == 2)
        full.update(50)  // 50 + 60 does not fit: both wait
        #expect(order.entries.isEmpty)
        full.update(40)  // room for one: 40 + 60; the next does not fit beside it
        #expect(order.entries == ["interactive"])
        full.end()
        #expect(order.entries == ["interactive"])  // 60 + 60 is still over
        // Ended outside the lock: ending it starts the background fetch, which appends its charge.
        charges.withLock { $0 }.forEach { $0.end() }
        #expect(order.entries == ["interactive", "background"])
        #expect(pool.statistics.workInUse == 60)
        charges.withLock { $0.forEach { $0.end() } }
        #expect(pool.statistics.workInUse == 0)
    }

    @Test func theModelFollowsShrinkOnLoadAndWhatDecodersHoldWhole() {
        let photo = SourceInfo(format: .jpeg, width: 6000, height: 4000)
        #expect(DecodeMemory.loadShrink(photo, width: 300, height: 200) == 8)
        #expect(DecodeMemory.loadShrink(photo, width: 1024, height: 683) == 2)
        #expect(DecodeMemory.loadShrink(photo, width: 3000, height: 2000) == 1)
        #expect(
            DecodeMemory.loadShrink(SourceInfo(format: .png, width: 6000, height: 4000), width: 300, height: 200) == 1)
        // A progressive JPEG keeps every coefficient (2 bytes a sample) whatever the output size.
        let progressive = SourceInfo(format: .jpeg, width: 6000, height: 4000, interlaced: true)
        #expect(DecodeMemory.estimate(progressive, width: 300, height: 200) >= 6000 * 4000 * 3 * 2)
        #expect(DecodeMemory.estimate(photo, width: 300, height: 200) < 16 << 20)
        // An interlaced PNG is held whole, 16-bit samples counted as two bytes.
        let png = SourceInfo(format: .png, width: 4000, height: 3000, bands: 3, bytesPerSample: 2, interlaced: true)
        #expect(DecodeMemory.estimate(png, width: 300, height: 225) >= 4000 * 3000 * 3 * 2)
    }
}

/// Reports `reported` bytes of progress at once, then answers `body` when its gate opens.
final class ReportingFetcher: ImageFetching {
    let gate = Gate()
    let body: [UInt8]
    let reported: Int

    init(body: [UInt8], reported: Int) {
        self.body = body
        self.reported = reported
    }

    func fetch(
        _ url: SourceURL, revalidating validators: SourceValidators?,
        completion: @escaping @Sendable (Result<FetchedSource, ThumbnailError>) -> Void
    ) {
        fetch(url, revalidating: validators, options: FetchOptions(), completion: completion)
    }

    func fetch(
        _ url: SourceURL, revalidating validators: SourceValidators?, options: FetchOptions,
        completion: @escaping @Sendable (Result<FetchedSource, ThumbnailError>) -> Void
    ) {
        options.progress?(reported)
        let body = body
        gate.whenOpen {
            DispatchQueue.global().async { completion(.success(.modified(ImageBytes(body), OriginDirectives()))) }
        }
    }
}
