import Foundation
import Primitives
import TestSupport
import Testing

@testable import ThumbnailCore

/// A job past `--job-timeout` is answered at its deadline by the pool's watchdog, whatever its
/// worker does: a call that never returns is abandoned on its thread, a new thread takes its
/// place (so the next misses are served), and past `workers` stuck threads the pool runs short
/// and says so (`usable`), which `/readyz` reports.
@Suite struct JobTimeoutTests {
    /// Sources whose first byte is 255 make `encode` spin until `release` opens (a decoder that
    /// never returns); with `honoursDeadline`, it gives up at the job's deadline instead (what
    /// libvips' kill flag does). Everything else is `FakeImaging`'s.
    final class SpinningImaging: ImageInspecting, ImageDecoding, ImageEncoding {
        let release = Gate(open: false)
        let honoursDeadline: Bool
        let plain = FakeImaging()
        let spins = Locked(0)

        init(honoursDeadline: Bool = false) { self.honoursDeadline = honoursDeadline }

        func inspect(_ source: ImageBytes) throws(ThumbnailError) -> SourceInfo { try plain.inspect(source) }

        func decode(
            _ source: ImageBytes, info: SourceInfo, fittingWidth width: Int, height: Int, deadline: JobDeadline
        ) throws(ThumbnailError) -> DecodedSource<FakeCopy> {
            try plain.decode(source, info: info, fittingWidth: width, height: height, deadline: deadline)
        }

        func pixels(of copy: DecodedSource<FakeCopy>) throws(ThumbnailError) -> RGBAPixels {
            try plain.pixels(of: copy)
        }

        func encode(_ input: EncodeInput<FakeCopy>, resize: Resize, output: OutputChoice, deadline: JobDeadline)
            throws(ThumbnailError) -> EncodedImage
        {
            if case .original(let bytes, _) = input, bytes.array.first == 255 {
                spins.withLock { $0 += 1 }
                if honoursDeadline {
                    while !deadline.hasPassed { usleep(1000) }
                    throw ThumbnailError(.processingTimeout, "stopped at the deadline")
                }
                release.wait()
            }
            return try plain.encode(input, resize: resize, output: output, deadline: deadline)
        }
    }

    typealias Pipeline = ThumbnailPipeline<SpinningImaging, String>

    func makePipeline(_ imaging: SpinningImaging, _ fetcher: FakeFetcher, workers: Int) -> Pipeline {
        Pipeline(
            cache: ImageCache<Pipeline.Entry>(budget: 10_000_000),
            workers: WorkerPool(workers: workers, queueCapacity: 8, jobTimeout: .milliseconds(200)),
            fetcher: fetcher, imaging: imaging, limits: .test(errorTTL: .seconds(3600))
        ) { image, _, _ in String(decoding: image.bytes.array, as: UTF8.self) }
    }

    func url(_ name: String) -> String { "http://origin.example/\(name).jpg" }

    @Test func aJobThatNeverReturnsIsAnsweredAtItsDeadlineAndItsWorkerReplaced() async throws {
        let imaging = SpinningImaging()
        defer { imaging.release.open() }
        let fetcher = FakeFetcher([url("spin"): .success([255, 50]), url("fine"): .success([100, 50])])
        let pipeline = makePipeline(imaging, fetcher, workers: 1)
        let (stuck, _) = await pipeline.thumbnail(try request(url("spin")))
        guard case .failure(let error) = stuck else {
            Issue.record("expected the job to be given up")
            return
        }
        #expect(error.code == .processingTimeout)
        let workers = pipeline.metrics.workers
        #expect(workers.timedOut == 1)
        #expect(workers.stuck == 1)
        #expect(workers.replaced == 1)
        #expect(workers.usable == 1)
        #expect(workers.admitted == 0 && workers.running == 0)
        // The one worker is still spinning, yet the next miss is served by its replacement.
        let (next, _) = await pipeline.thumbnail(try request(url("fine")))
        #expect(try text(next) == "w=100,h=50")
        // The source is remembered as failed: asking again costs no worker.
        let (again, outcome) = await pipeline.thumbnail(try request(url("spin")))
        #expect(outcome == .negative)
        #expect((try? again.get()) == nil)
        #expect(imaging.spins.withLock { $0 } == 1)
        // When the stuck call finally returns, its thread ends (its replacement stays): no result
        // is delivered twice and the pool is back to one usable worker and nothing stuck.
        imaging.release.open()
        #expect(await eventually(pipeline.metrics) { $0.workers.stuck == 0 })
        #expect(pipeline.metrics.workers.usable == 1)
    }

    @Test func pastWorkersStuckThreadsThePoolRunsShortAndSaysSo() async throws {
        let imaging = SpinningImaging()
        defer { imaging.release.open() }
        let names = (0..<4).map { "spin\($0)" }
        var bodies = Dictionary(
            uniqueKeysWithValues: names.map { (url($0), Result<[UInt8], ThumbnailError>.success([255, 50])) })
        bodies[url("fine")] = .success([100, 50])
        let pipeline = makePipeline(imaging, FakeFetcher(bodies), workers: 2)
        for name in names {
            let (result, _) = await pipeline.thumbnail(try request(url(name)))
            #expect((try? result.get()) == nil)
        }
        let workers = pipeline.metrics.workers
        #expect(workers.timedOut == 4)
        #expect(workers.stuck == 4)
        #expect(workers.replaced == 2)  // one each for the first two; then none
        #expect(workers.usable == 0)
        // Stuck threads that come back take jobs again while the pool is short.
        imaging.release.open()
        #expect(await eventually(pipeline.metrics) { $0.workers.stuck == 0 })
        #expect(pipeline.metrics.workers.usable == 2)
        let (next, _) = await pipeline.thumbnail(try request(url("fine")))
        #expect(try text(next) == "w=100,h=50")
    }

    @Test func workThatStopsAtItsDeadlineKeepsItsThread() async throws {
        let imaging = SpinningImaging(honoursDeadline: true)
        let fetcher = FakeFetcher([url("spin"): .success([255, 50]), url("fine"): .success([100, 50])])
        let pipeline = makePipeline(imaging, fetcher, workers: 1)
        let (stopped, _) = await pipeline.thumbnail(try request(url("spin")))
        #expect((try? stopped.get()) == nil)
        #expect(await eventually(pipeline.metrics) { $0.workers.stuck == 0 })
        let workers = pipeline.metrics.workers
        #expect(workers.timedOut <= 1)  // the watchdog or the work itself was first
        #expect(workers.usable == 1)
        #expect(workers.admitted == 0 && workers.workInUse == 0)
        let (next, _) = await pipeline.thumbnail(try request(url("fine")))
        #expect(try text(next) == "w=100,h=50")
    }
}
