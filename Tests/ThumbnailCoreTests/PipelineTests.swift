import Foundation
import Synchronization
import Testing

@testable import ThumbnailCore

@Suite struct PipelineTests {
    let photo = "http://origin.example/photo.jpg"

    func pipeline(_ fetcher: FakeFetcher, _ transformer: FakeTransformer, workers: Int = 2, queue: Int = 64)
        -> ThumbnailPipeline
    {
        ThumbnailPipeline(
            cache: ImageCache(budget: 10_000_000), workers: WorkerPool(workers: workers, queueCapacity: queue),
            fetcher: fetcher, transformer: transformer)
    }

    @Test func concurrentRequestsForOneVariantDoTheWorkOnce() async throws {
        let fetcher = FakeFetcher([photo: .success([100, 50])])
        let transformer = FakeTransformer()
        let pipeline = pipeline(fetcher, transformer)
        let req = try request(photo)
        let outcomes = await withTaskGroup(of: ThumbnailPipeline.Outcome.self) { group in
            for _ in 0..<50 { group.addTask { await pipeline.thumbnail(req).1 } }
            return await group.reduce(into: [ThumbnailPipeline.Outcome]()) { $0.append($1) }
        }
        #expect(fetcher.count(photo) == 1)
        #expect(transformer.transforms == 1)
        #expect(outcomes.filter { $0 == .miss }.count == 1)
        #expect(outcomes.filter { $0 == .coalesced }.count == 49)
        let (again, outcome) = await pipeline.thumbnail(req)
        #expect(outcome == .hit)
        #expect(String(decoding: try again.get().bytes.array, as: UTF8.self) == "w=100,h=50")
    }

    @Test func differentWidthsOfOneSourceFetchItOnce() async throws {
        let fetcher = FakeFetcher([photo: .success([100, 50])])
        let transformer = FakeTransformer()
        let pipeline = pipeline(fetcher, transformer)
        await withTaskGroup(of: Void.self) { group in
            for width in 100..<120 {
                let req = try! request(photo, [("w", "\(width)")])
                group.addTask { _ = await pipeline.thumbnail(req) }
            }
        }
        #expect(fetcher.count(photo) == 1)
        #expect(transformer.transforms == 20)
        _ = await pipeline.thumbnail(try request(photo, [("w", "300")]))
        #expect(fetcher.count(photo) == 1)
        // Once a decoded copy exists, new sizes well below it are cut from it without decoding.
        let decodesBefore = transformer.decodes.withLock { $0 }
        for width in [40, 45, 50] { _ = await pipeline.thumbnail(try request(photo, [("w", "\(width)")])) }
        #expect(transformer.decodes.withLock { $0 } == decodesBefore)
        #expect(pipeline.statistics.fromDecoded >= 3)
    }

    @Test func pixelLimitRefusesBeforeTransforming() async throws {
        let fetcher = FakeFetcher([photo: .success([250, 250])])
        let transformer = FakeTransformer()
        let pipeline = ThumbnailPipeline(
            cache: ImageCache(budget: 1_000_000), workers: WorkerPool(workers: 1, queueCapacity: 4), fetcher: fetcher,
            transformer: transformer, limits: .init(maxSourcePixels: 2500 * 2499))
        let (result, _) = await pipeline.thumbnail(try request(photo))
        #expect(throws: ThumbnailError(.tooManyPixels, "2500x2500 is over the 6247500-pixel limit")) {
            try result.get()
        }
        #expect(transformer.transforms == 0)
    }

    @Test func fetchErrorsReachEveryWaiterAndAreNotCached() async throws {
        let fetcher = FakeFetcher([photo: .failure(ThumbnailError(.originFailed))])
        let pipeline = pipeline(fetcher, FakeTransformer())
        let req = try request(photo)
        async let a = pipeline.thumbnail(req)
        async let b = pipeline.thumbnail(req)
        let (ra, rb) = await (a, b)
        #expect(throws: ThumbnailError.self) { try ra.0.get() }
        #expect(throws: ThumbnailError.self) { try rb.0.get() }
        _ = await pipeline.thumbnail(req)
        #expect(fetcher.count(photo) == 2)
    }

    @Test func fullQueueRejectsNewMissesAtOnceButServesHits() async throws {
        var table: [String: Result<[UInt8], ThumbnailError>] = [:]
        for i in 0..<4 { table["http://origin.example/\(i)"] = .success([10, 10]) }
        let fetcher = FakeFetcher(table, delay: .milliseconds(400))
        let pipeline = pipeline(fetcher, FakeTransformer(), workers: 1, queue: 1)
        let warm = try request("http://origin.example/3")
        _ = await pipeline.thumbnail(warm)
        // Two slow misses fill workers + queue (1 + 1): admission happens synchronously inside
        // `thumbnail`, before the fetch, so the third is refused without waiting for anything.
        let done = DispatchGroup()
        for i in 0..<2 {
            done.enter()
            pipeline.thumbnail(try request("http://origin.example/\(i)")) { _, _ in done.leave() }
        }
        let third = Mutex<Result<CachedImage, ThumbnailError>?>(nil)
        pipeline.thumbnail(try request("http://origin.example/2")) { result, _ in third.withLock { $0 = result } }
        #expect(throws: ThumbnailError(.queueFull, "worker queue full")) { try third.withLock { $0 }?.get() }
        #expect(pipeline.cachedVariant(warm) != nil)
        #expect(pipeline.workers.statistics.rejected == 1)
        await withCheckedContinuation { continuation in done.notify(queue: .global()) { continuation.resume() } }
        #expect(fetcher.count("http://origin.example/2") == 0)
    }

    @Test func interactiveWorkIsTakenBeforeBackgroundWork() async throws {
        let pool = WorkerPool(workers: 1, queueCapacity: 16)
        let order = OrderLog()
        let blocker = pool.reserve(.interactive)!
        let gate = DispatchSemaphore(value: 0)
        blocker.run { gate.wait() }
        let tickets = (0..<3).map { _ in pool.reserve(.background)! } + (0..<3).map { _ in pool.reserve(.interactive)! }
        for (index, ticket) in tickets.enumerated() { ticket.run { order.append(index < 3 ? "bg" : "fg") } }
        gate.signal()
        while pool.statistics.admitted > 0 { try await Task.sleep(for: .milliseconds(5)) }
        #expect(order.entries == ["fg", "fg", "fg", "bg", "bg", "bg"])
    }

    /// A spent job's closure holds its source image; the queue must not keep it (it once kept up
    /// to 64 of them, megabytes each, outside the cache budget).
    @Test func aFinishedJobReleasesWhatItCaptured() async throws {
        final class Payload: Sendable {}
        let pool = WorkerPool(workers: 1, queueCapacity: 8)
        var weakPayloads: [Weak] = []
        for _ in 0..<3 {
            let payload = Payload()
            weakPayloads.append(Weak(payload))
            pool.reserve(.interactive)!.run { withExtendedLifetime(payload) {} }
        }
        // Bounded wait (not a timing assertion): the worker drops its local reference right after
        // the job returns, a moment after `admitted` reaches 0.
        for _ in 0..<500 where weakPayloads.contains(where: { $0.object != nil }) || pool.statistics.admitted > 0 {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(pool.statistics.admitted == 0)
        #expect(weakPayloads.allSatisfy { $0.object == nil })
    }

    @Test func backgroundMayUseOnlyHalfTheQueue() {
        let pool = WorkerPool(workers: 1, queueCapacity: 4)
        let background = (0..<3).compactMap { _ in pool.reserve(.background) }
        #expect(background.count == 3)  // 1 worker + 4 / 2
        #expect(pool.reserve(.interactive) != nil)
        withExtendedLifetime(background) {}
    }

    @Test func prefetchLoadsTheOriginalOnce() async throws {
        let fetcher = FakeFetcher([photo: .success([100, 50])])
        let pipeline = pipeline(fetcher, FakeTransformer())
        try pipeline.prefetch(try RequestParser.parse(query: [("url", photo)], accept: nil, route: .prefetch))
        while pipeline.cache.peek(CacheKey.original(try SourceURL(parsing: photo))) == nil {
            try await Task.sleep(for: .milliseconds(10))
        }
        _ = await pipeline.thumbnail(try request(photo))
        #expect(fetcher.count(photo) == 1)
    }
}

final class Weak: @unchecked Sendable {
    weak var object: AnyObject?
    init(_ object: AnyObject) { self.object = object }
}

final class OrderLog: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [String] = []
    func append(_ item: String) { lock.withLock { items.append(item) } }
    var entries: [String] { lock.withLock { items } }
}

@Suite struct GeometryTests {
    func spec(_ w: Int, _ h: Int? = nil, _ fit: Fit = .inside) -> TransformSpec {
        TransformSpec(width: w, height: h, fit: fit)
    }

    @Test func exactSizesComeFromTheSourceSize() {
        #expect(
            OutputGeometry.resize(for: spec(300), sourceWidth: 6000, sourceHeight: 4000)
                == .exact(width: 300, height: 200))
        #expect(
            OutputGeometry.resize(for: spec(300, 100), sourceWidth: 6000, sourceHeight: 4000)
                == .exact(width: 150, height: 100))
        #expect(
            OutputGeometry.resize(for: spec(301), sourceWidth: 1000, sourceHeight: 333)
                == .exact(width: 301, height: 100))
        #expect(
            OutputGeometry.resize(for: spec(9000), sourceWidth: 600, sourceHeight: 400)
                == .exact(width: 600, height: 400))
        #expect(
            OutputGeometry.resize(for: spec(100, 8000, .fill), sourceWidth: 600, sourceHeight: 400)
                == .exact(width: 100, height: 400))
        #expect(
            OutputGeometry.resize(for: spec(1000, 1000, .cover), sourceWidth: 600, sourceHeight: 400)
                == .cover(width: 600, height: 400, crop: .centre))
    }

    @Test func decodedCopiesServeOnlySizesWellBelowThem() {
        let info = SourceInfo(format: .jpeg, width: 6000, height: 4000)
        let copy = DecodedSource(pixels: ImageBytes([0]), width: 750, height: 500, source: info)
        #expect(copy.canServe(spec(375)))
        #expect(copy.canServe(spec(200)))
        #expect(!copy.canServe(spec(400)))
        #expect(!copy.canServe(spec(300, 300, .fill)))  // 300 of 4000 tall needs more than half of 500
        let full = DecodedSource(
            pixels: ImageBytes([0]), width: 600, height: 400, source: SourceInfo(format: .png, width: 600, height: 400))
        #expect(full.canServe(spec(600)))
    }

    @Test func decodeBoxesAreTwiceTheOutputUpToTheReusableSize() {
        let jpeg = SourceInfo(format: .jpeg, width: 6000, height: 4000)
        // JPEG: the shrink-on-load size that covers 2× the output (1/8 = 750×500 covers 600×400).
        #expect(ThumbnailRenderer.decodeBox(for: spec(300), source: jpeg) == (750, 500))
        // 2 × 399 = 798 needs 1/4 (1500), capped at the reusable 1024.
        #expect(ThumbnailRenderer.decodeBox(for: spec(399), source: jpeg) == (1024, 683))
        let png = SourceInfo(format: .png, width: 6000, height: 4000)
        #expect(ThumbnailRenderer.decodeBox(for: spec(300), source: png) == (1024, 683))
        // Beyond the reusable size: decode to the output itself.
        #expect(ThumbnailRenderer.decodeBox(for: spec(2000), source: png) == (2000, 1334))
        let small = SourceInfo(format: .png, width: 400, height: 300)
        #expect(ThumbnailRenderer.decodeBox(for: spec(100), source: small) == (400, 300))
    }
}
