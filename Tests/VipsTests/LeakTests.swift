import TestSupport
import Testing
import Vips

#if canImport(Glibc)
    import Glibc
#endif

@Suite("Vips leaks")
struct LeakTests {
    /// A thumbnail is kept (cached) at the size of its bytes: the block holding it must be that
    /// size, not the 16-KiB-and-up power of two libvips' memory target grew to (a 64 × 48 JPEG is
    /// about 1 KiB; before the shrink it sat in 16 KiB).
    @Test(arguments: [VipsOutputFormat.jpeg, .png, .webp, .avif], Input.allCases)
    func encodedOutputIsHeldInABlockOfItsOwnSize(format: VipsOutputFormat, input: Input) throws {
        let source = Fixtures.jpeg(width: 128, height: 96)
        let result = try thumbnail(source, .exact(width: 64, height: 48), format: format, from: input)
        let buffer = result.buffer
        #expect(buffer.count > 0)
        // malloc rounds a block up to 16 bytes and may keep a tail under its minimum chunk.
        #expect(buffer.allocatedBytes >= buffer.count)
        #expect(
            buffer.allocatedBytes - buffer.count < 64, "\(buffer.count) bytes in a \(buffer.allocatedBytes)-byte block")
    }

    @Test func everyPathUnrefsItsImages() throws {
        let jpeg = Fixtures.jpeg(width: 200, height: 100)
        let calls: [() throws -> Void] = [
            { _ = try thumbnail(jpeg, .exact(width: 50, height: 25)) },
            { _ = try thumbnail(jpeg, .exact(width: 50, height: 25), from: .copy) },
            {
                _ = try thumbnail(
                    jpeg, .cover(width: 30, height: 30, crop: .attention), format: .webp, from: .reducedCopy)
            },
            {
                _ = try thumbnail(
                    Fixtures.png(width: 64, height: 64, alpha: true), .cover(width: 30, height: 30, crop: .centre))
            },
            {
                _ = try thumbnail(
                    Fixtures.png(width: 64, height: 64, alpha: true), .exact(width: 30, height: 30), from: .copy)
            },
            {
                _ = try thumbnail(
                    Fixtures.gif(width: 40, height: 30, frames: 2), .exact(width: 20, height: 15), format: .png,
                    opaqueFormat: .jpeg)
            },
            {
                _ = try thumbnail(
                    Fixtures.jpegWithICC(width: 40, height: 40), .exact(width: 20, height: 10), format: .webp)
            },
            {
                _ = try thumbnail(
                    Fixtures.cmykJPEG(width: 40, height: 40), .exact(width: 20, height: 20), format: .png, from: .copy)
            },
            { _ = try thumbnail(Array(jpeg.prefix(400)), .exact(width: 50, height: 25)) },  // decode fails
            { _ = try decode(Array(jpeg.prefix(400))) },  // decode fails
            { _ = try thumbnail(Fixtures.svg(), .exact(width: 10, height: 10)) },  // unknown
            { _ = try thumbnail(jpeg, .exact(width: 10, height: 10), quality: 0) },  // invalid
            { _ = try header(jpeg) },
        ]
        // One leaked object per call would add 100 × 13 = 1 300.
        expectNoLeak(calls, iterations: 100, below: 100 * calls.count / 2)
    }

    /// The time-limited paths on their own, so that a leak in one of them alone shows: the timed
    /// source (a success and a failed first read), the copy's progress handler (a success and a
    /// kill at its first signal), a decode stopped.
    @Test func timeLimitedCallsUnrefTheirImages() throws {
        let jpeg = Fixtures.jpeg(width: 200, height: 100)
        let webp = Fixtures.webp(width: 200, height: 100)
        let calls: [() throws -> Void] = [
            { _ = try thumbnail(jpeg, .cover(width: 40, height: 40, crop: .centre), timeLimit: .seconds(600)) },
            { _ = try thumbnail(jpeg, .exact(width: 50, height: 25), timeLimit: .zero) },
            { _ = try thumbnail(webp, .exact(width: 50, height: 25), from: .copy, timeLimit: .seconds(600)) },
            { _ = try thumbnail(webp, .exact(width: 50, height: 25), timeLimit: .zero) },
            { _ = try decode(jpeg, width: 60, height: 60, timeLimit: .zero) },
        ]
        // One leaked object in one of them would add 300.
        expectNoLeak(calls, iterations: 300, below: 150)
    }

    /// Kept animations: every cut (the frame crop's own copy, attention's first-frame search), both
    /// encoders, and a GIF stopped by its limit (the copy killed) or not.
    @Test func animatedCallsUnrefTheirImages() throws {
        let gif = Fixtures.animatedGIF(width: 60, height: 40, frames: 3, delays: [100, 200, 300], transparent: true)
        let webp = Fixtures.animatedWebP(width: 60, height: 40, frames: 3, delays: [100, 200, 300], loop: 2)
        let calls: [() throws -> Void] = [
            { _ = try thumbnail(gif, .exact(width: 30, height: 20), format: .gif, keepsAnimation: true) },
            {
                _ = try thumbnail(
                    gif, .cover(width: 20, height: 20, crop: .attention), format: .webp, keepsAnimation: true)
            },
            {
                _ = try thumbnail(
                    webp, .cover(width: 20, height: 20, crop: .centre), format: .webp, opaqueFormat: .gif,
                    keepsAnimation: true)
            },
            {
                _ = try thumbnail(
                    webp, .exact(width: 30, height: 20), format: .gif, keepsAnimation: true, timeLimit: .seconds(600))
            },
            {
                _ = try thumbnail(
                    gif, .exact(width: 30, height: 20), format: .gif, keepsAnimation: true, timeLimit: .zero)
            },
            { _ = try header(webp) },
        ]
        // One leaked object in one of them would add 100.
        expectNoLeak(calls, iterations: 100, below: 50)
    }

    /// Runs `calls` `iterations` times and expects the live vips objects to grow by less than
    /// `bar`, half the smallest leak's signal. The count is process-wide and tests running in
    /// parallel have images alive for a moment (a service test's decode pipeline holds dozens; a
    /// CI run once added ~600 to a single sample), so each count is the lowest of 20 samples over
    /// ~100 ms; a leak stays.
    private func expectNoLeak(_ calls: [() throws -> Void], iterations: Int, below bar: Int) {
        func runAll() {
            for call in calls { try? call() }
        }
        runAll()  // warm up lazily created singletons
        let before = quietCount()
        for _ in 0..<iterations { runAll() }
        let after = quietCount()
        #expect(after - before < bar, "live vips objects \(before) → \(after)")
    }

    /// The lowest of several samples: other tests' short-lived images come and go, leaks stay.
    private func quietCount() -> Int {
        var lowest = Int.max
        for _ in 0..<20 {
            lowest = min(lowest, Fixtures.liveVipsObjectCount())
            usleep(5_000)
        }
        return lowest
    }
}
