import Foundation
import Primitives
import TestSupport
import Testing

@testable import ThumbnailCore

@Suite struct PipelineTests {
    let photo = "http://origin.example/photo.jpg"

    @Test func concurrentRequestsForOneVariantDoTheWorkOnce() async throws {
        let fetcher = FakeFetcher([photo: .success([100, 50])], gate: Gate())
        let imaging = FakeImaging()
        let pipeline = makePipeline(fetcher, imaging)
        let req = try request(photo)
        async let outcomes = withTaskGroup(of: FakePipeline.Outcome.self) { group in
            for _ in 0..<50 { group.addTask { await pipeline.thumbnail(req).1 } }
            return await group.reduce(into: [FakePipeline.Outcome]()) { $0.append($1) }
        }
        // Everyone has joined the one job before its fetch may finish.
        #expect(await eventually(pipeline.metrics) { $0.coalesced == 49 })
        fetcher.gate.open()
        let all = await outcomes
        #expect(fetcher.count(photo) == 1)
        #expect(imaging.encodes == 1)
        #expect(all.filter { $0 == .miss }.count == 1)
        #expect(all.filter { $0 == .coalesced }.count == 49)
        let (again, outcome) = await pipeline.thumbnail(req)
        #expect(outcome == .hit)
        #expect(try text(again) == "w=100,h=50")
        #expect(try again.get().prepared == "prepared w=100,h=50")  // made once, kept with the entry
        let metrics = pipeline.metrics
        #expect(metrics.cache[.variant].hits == 1)
        #expect(metrics.cache[.variant].entries == 1 && metrics.cache[.original].entries == 1)
        // A variant is charged its bytes, what its prepared answer holds, and the entry's overhead.
        #expect(metrics.cache[.variant].bytes == 10 + 19 + ImageCache<FakePipeline.Entry>.perEntryOverhead)
        #expect(metrics.fetches.started == 1 && metrics.fetches.succeeded == 1 && metrics.fetches.bytes == 2)
        #expect(metrics.renders.fromOriginal == 1)
    }

    @Test func theFirstSizeStreamsALaterOneMakesACopyAndTheRestAreCutFromIt() async throws {
        let fetcher = FakeFetcher([photo: .success([200, 100])], gate: Gate())
        let imaging = FakeImaging()
        let pipeline = makePipeline(fetcher, imaging)
        // Twenty widths of one new source at once: one fetch, each streamed from the original.
        async let first: Void = withTaskGroup(of: Void.self) { group in
            for width in 100..<120 {
                let req = try! request(photo, [("w", "\(width)")])
                group.addTask { _ = await pipeline.thumbnail(req) }
            }
        }
        #expect(await eventually(pipeline.metrics) { $0.workers.admitted == 20 })
        fetcher.gate.open()
        await first
        #expect(fetcher.count(photo) == 1)
        var renders = pipeline.metrics.renders
        #expect((renders.fromOriginal, renders.copiesMade, renders.fromCopy) == (20, 0, 0))
        #expect(imaging.decodes.withLock { $0 } == 0)
        // The original is cached now: the next size decodes a reusable copy (2000 px fits 1024).
        _ = await pipeline.thumbnail(try request(photo, [("w", "300")]))
        #expect(imaging.decodes.withLock { $0 } == 1)
        for width in [40, 45, 50, 512] { _ = await pipeline.thumbnail(try request(photo, [("w", "\(width)")])) }
        renders = pipeline.metrics.renders
        #expect((renders.fromOriginal, renders.copiesMade, renders.fromCopy) == (20, 1, 4))
        #expect(imaging.decodes.withLock { $0 } == 1)
        #expect(pipeline.metrics.cache[.decoded].entries == 1)
        // More than half the copy's resolution: from the original again, not upscaled from the copy.
        let (large, _) = await pipeline.thumbnail(try request(photo, [("w", "600")]))
        #expect(try text(large) == "w=600,h=300")
        #expect(pipeline.metrics.renders.fromOriginal == 21)
        #expect(fetcher.count(photo) == 1)
    }

    @Test func pixelLimitRefusesBeforeRendering() async throws {
        let fetcher = FakeFetcher([photo: .success([250, 250])])
        let imaging = FakeImaging()
        let pipeline = makePipeline(fetcher, imaging, workers: 1, queue: 4, maxSourcePixels: 2500 * 2499)
        let (result, _) = await pipeline.thumbnail(try request(photo))
        #expect(throws: ThumbnailError(.tooManyPixels, "2500x2500 is over the 6247500-pixel limit")) {
            try result.get()
        }
        #expect(imaging.encodes == 0)
        #expect(pipeline.metrics.renders.failed[.tooManyPixels] == 1)
    }

    @Test func fetchErrorsReachEveryWaiterAndAreNeverCachedAsContent() async throws {
        let fetcher = FakeFetcher([photo: .failure(ThumbnailError(.originFailed))], gate: Gate())
        let pipeline = makePipeline(fetcher, FakeImaging())
        let req = try request(photo)
        async let a = pipeline.thumbnail(req)
        async let b = pipeline.thumbnail(req)
        #expect(await eventually(pipeline.metrics) { $0.coalesced == 1 })
        fetcher.gate.open()
        let (ra, rb) = await (a, b)
        #expect(throws: ThumbnailError(.originFailed)) { try ra.0.get() }
        #expect(throws: ThumbnailError(.originFailed)) { try rb.0.get() }
        #expect(pipeline.metrics.cache.total.entries == 0)
        // Within the error TTL the failure is answered from memory (see the negative-caching test).
        let (again, outcome) = await pipeline.thumbnail(req)
        #expect(throws: ThumbnailError(.originFailed)) { try again.get() }
        #expect(outcome == .negative)
        #expect(fetcher.count(photo) == 1)
        #expect(pipeline.metrics.fetches.failed[.originFailed] == 1)
        #expect(pipeline.metrics.workers.admitted == 0)
    }

    @Test func anOriginFailureIsRememberedForTheErrorTTL() async throws {
        let clock = FakeClock()
        let fetcher = FakeFetcher([photo: .failure(ThumbnailError(.originFailed))])
        let pipeline = FakePipeline(
            cache: ImageCache<FakePipeline.Entry>(budget: 1_000_000), workers: WorkerPool(workers: 1, queueCapacity: 4),
            fetcher: fetcher, imaging: FakeImaging(), limits: .test(errorTTL: .seconds(10)), now: { clock.now }
        ) { _, _, _ in "" }
        let (first, firstOutcome) = await pipeline.thumbnail(try request(photo))
        #expect(throws: ThumbnailError(.originFailed)) { try first.get() }
        #expect(firstOutcome == .miss)
        // Another size of the same source, within the TTL: the same answer, no fetch.
        let (second, outcome) = await pipeline.thumbnail(try request(photo, [("w", "50")]))
        #expect(throws: ThumbnailError(.originFailed)) { try second.get() }
        #expect(outcome == .negative)
        try pipeline.prefetch(try request(photo))  // a no-op
        #expect(fetcher.count(photo) == 1)
        #expect(pipeline.metrics.fetches.remembered == 1)
        clock.advance(.seconds(11))
        _ = await pipeline.thumbnail(try request(photo))
        #expect(fetcher.count(photo) == 2)
    }

    @Test func policyRefusalsAndSuccessesAreNotRemembered() async throws {
        let fetcher = FakeFetcher([photo: .failure(ThumbnailError(.sourceNotAllowed))])
        let pipeline = makePipeline(fetcher, FakeImaging())
        _ = await pipeline.thumbnail(try request(photo))
        _ = await pipeline.thumbnail(try request(photo))
        #expect(fetcher.count(photo) == 2)
        #expect(pipeline.metrics.fetches.remembered == 0)
    }

    @Test func fullQueueRejectsNewMissesAtOnceButServesHits() async throws {
        var table: [String: Result<[UInt8], ThumbnailError>] = [:]
        for i in 0..<4 { table["http://origin.example/\(i)"] = .success([10, 10]) }
        let fetcher = FakeFetcher(table, gate: Gate(open: true))
        let pipeline = makePipeline(fetcher, FakeImaging(), workers: 1, queue: 1)
        let warm = try request("http://origin.example/3")
        _ = await pipeline.thumbnail(warm)
        fetcher.gate.close()
        // Two held misses fill workers + queue (1 + 1): admission happens synchronously inside
        // `thumbnail`, before the fetch, so the third is refused without waiting for anything.
        let done = DispatchGroup()
        for i in 0..<2 {
            done.enter()
            pipeline.thumbnail(try request("http://origin.example/\(i)")) { _, _ in done.leave() }
        }
        let third = Locked<Result<FakePipeline.Variant, ThumbnailError>?>(nil)
        pipeline.thumbnail(try request("http://origin.example/2")) { result, _ in third.withLock { $0 = result } }
        #expect(throws: ThumbnailError(.queueFull, "worker queue full")) { try third.withLock { $0 }?.get() }
        #expect(pipeline.cachedVariant(try #require(warm.variantKey)) != nil)
        #expect(pipeline.metrics.workers.rejected == 1)
        fetcher.gate.open()
        await withCheckedContinuation { continuation in done.notify(queue: .global()) { continuation.resume() } }
        #expect(fetcher.count("http://origin.example/2") == 0)
    }

    @Test func purgeRemovesEverythingOfOneSourceAndNothingElse() async throws {
        let other = "http://origin.example/other.jpg"
        let fetcher = FakeFetcher([photo: .success([200, 100]), other: .success([100, 100])])
        let pipeline = makePipeline(fetcher, FakeImaging())
        for query in [
            [("w", "300")], [("w", "100")], [("w", "50"), ("format", "png")],
            [("w", "60"), ("h", "60"), ("fit", "fill")],
        ] {
            _ = await pipeline.thumbnail(try request(photo, query))
        }
        _ = await pipeline.thumbnail(try request(other))
        let before = pipeline.metrics.cache
        #expect(before[.decoded].entries == 1 && before[.original].entries == 2 && before[.variant].entries == 5)
        let removed = pipeline.purge(try SourceURL(parsing: photo))
        // The original, its copy and its four variants, whatever their sizes and formats.
        #expect(removed.entries == 6)
        let after = pipeline.metrics.cache
        #expect(removed.bytes == before.total.bytes - after.total.bytes)
        #expect(after[.original].entries == 1 && after[.variant].entries == 1 && after[.decoded].entries == 0)
        #expect(pipeline.cachedVariant(try #require(try request(other).variantKey)) != nil)
        #expect(pipeline.purge(try SourceURL(parsing: photo)) == CacheRemoval())
        _ = await pipeline.thumbnail(try request(photo, [("w", "300")]))
        #expect(fetcher.count(photo) == 2)
    }

    @Test func workInFlightAtAPurgeDoesNotPutTheSourceBack() async throws {
        let fetcher = FakeFetcher([photo: .success([200, 100])], gate: Gate())
        let pipeline = makePipeline(fetcher, FakeImaging())
        async let answer = pipeline.thumbnail(try request(photo))
        #expect(await eventually(pipeline.metrics) { $0.fetches.started == 1 })
        pipeline.purge(try SourceURL(parsing: photo))
        fetcher.gate.open()
        // The waiter still gets its thumbnail; the cache keeps nothing of it.
        #expect(try text(await answer.0) == "w=100,h=50")
        #expect(pipeline.metrics.cache.total.entries == 0)
        _ = await pipeline.thumbnail(try request(photo))
        #expect(fetcher.count(photo) == 2)
        #expect(pipeline.metrics.cache.total.entries == 2)
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
        #expect(await eventually(pool.statistics) { $0.admitted == 0 })
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
        // The worker drops its local reference right after the job returns, a moment after
        // `admitted` reaches 0.
        #expect(await eventually(pool.statistics) { $0.admitted == 0 })
        #expect(await eventually { weakPayloads.allSatisfy { $0.object == nil } })
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
        let pipeline = makePipeline(fetcher, FakeImaging())
        try pipeline.prefetch(try RequestParser.parse(query: [("url", photo)], requireSpec: false))
        #expect(await eventually(pipeline.metrics) { $0.cache[.original].entries == 1 && $0.workers.admitted == 0 })
        _ = await pipeline.thumbnail(try request(photo))
        #expect(fetcher.count(photo) == 1)
        // Prefetched means asked for before: the first size makes the reusable copy.
        #expect(pipeline.metrics.renders.copiesMade == 1)
    }
}

final class Weak: @unchecked Sendable {
    weak var object: AnyObject?
    init(_ object: AnyObject) { self.object = object }
}

final class OrderLog: Sendable {
    private let items = Locked<[String]>([])
    func append(_ item: String) { items.withLock { $0.append(item) } }
    var entries: [String] { items.withLock { $0 } }
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
                == .cover(width: 400, height: 400, crop: .centre))
    }

    /// A cover keeps the box's aspect ratio when the source is smaller than the box: the largest
    /// box of that shape the source fills, never upscaled (it was each side clamped alone).
    @Test func coverOfASmallerSourceKeepsTheBoxShape() {
        func cover(_ w: Int, _ h: Int, of sw: Int, _ sh: Int) -> Resize {
            OutputGeometry.resize(for: spec(w, h, .cover), sourceWidth: sw, sourceHeight: sh)
        }
        // Smaller in width only, in height only, in both.
        #expect(cover(300, 300, of: 290, 442) == .cover(width: 290, height: 290, crop: .centre))
        #expect(cover(300, 300, of: 442, 290) == .cover(width: 290, height: 290, crop: .centre))
        #expect(cover(300, 300, of: 100, 50) == .cover(width: 50, height: 50, crop: .centre))
        // Other shapes: the bound side is the source's, the other rounded to the box's ratio.
        #expect(cover(400, 200, of: 300, 1000) == .cover(width: 300, height: 150, crop: .centre))
        #expect(cover(200, 400, of: 1000, 300) == .cover(width: 150, height: 300, crop: .centre))
        #expect(cover(300, 200, of: 250, 250) == .cover(width: 250, height: 167, crop: .centre))
        #expect(cover(8192, 1, of: 100, 100) == .cover(width: 100, height: 1, crop: .centre))
        // A source at least as large as the box on both axes: the box itself.
        #expect(cover(300, 300, of: 300, 300) == .cover(width: 300, height: 300, crop: .centre))
        #expect(cover(300, 200, of: 4000, 3000) == .cover(width: 300, height: 200, crop: .centre))
        // The scale is the source's own: nothing upscales, whatever the box.
        #expect(OutputGeometry.scale(for: spec(300, 300, .cover), sourceWidth: 290, sourceHeight: 442) == (1, 1))
    }

    func copy(_ width: Int, _ height: Int, of info: SourceInfo) -> DecodedSource<FakeCopy> {
        DecodedSource(
            handle: FakeCopy(width: width, height: height), width: width, height: height, byteCount: 1, source: info)
    }

    @Test func decodedCopiesServeOnlySizesWellBelowThem() {
        let info = SourceInfo(format: .jpeg, width: 6000, height: 4000)
        let reduced = copy(750, 500, of: info)
        #expect(reduced.canServe(spec(375)))
        #expect(reduced.canServe(spec(200)))
        #expect(!reduced.canServe(spec(400)))
        #expect(!reduced.canServe(spec(300, 300, .fill)))  // 300 of 4000 tall needs more than half of 500
        let full = copy(600, 400, of: SourceInfo(format: .png, width: 600, height: 400))
        #expect(full.canServe(spec(600)))
    }

    @Test func copiesFitTheReusableSideAndNeverUpscale() {
        typealias Renderer = ThumbnailRenderer<FakeImaging>
        #expect(Renderer.copyBox(for: SourceInfo(format: .jpeg, width: 6000, height: 4000)) == (1024, 683))
        #expect(Renderer.copyBox(for: SourceInfo(format: .png, width: 1000, height: 3000)) == (342, 1024))
        #expect(Renderer.copyBox(for: SourceInfo(format: .png, width: 400, height: 300)) == (400, 300))
    }

    @Test func dprMultipliesTheBoxAndSharesTheKey() throws {
        let source = "http://a.example/x.jpg"
        let double = try request(source, [("w", "300"), ("h", "200"), ("dpr", "2")])
        #expect(double.spec?.width == 600 && double.spec?.height == 400)
        #expect(double.variantKey == (try request(source, [("w", "600"), ("h", "400")])).variantKey)
        let oneAndAHalf = try request(source, [("w", "333"), ("dpr", "1.5")])
        #expect(oneAndAHalf.spec?.width == 500)  // 499.5 rounds up
        #expect(
            OutputGeometry.resize(for: try #require(oneAndAHalf.spec), sourceWidth: 400, sourceHeight: 300)
                == .exact(width: 400, height: 300))  // capped by the source like every size
    }
}
