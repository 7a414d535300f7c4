import TestSupport
import Testing
import Vips

/// `timeLimit` stops the pixel work inside libvips (reads that fail for the streaming loaders,
/// the kill flag at each progress signal for everything else) and the call throws `.timedOut`,
/// leaving nothing behind (`LeakTests` runs such calls too).
@Suite("Vips time limit")
struct TimeLimitTests {
    /// 4000 × 4000 PNG: no shrink-on-load, so a thumbnail decodes all 16 megapixels (a few hundred
    /// milliseconds). Made once; the pattern compresses well, so it is quick to make.
    static let bigPNG = Fixtures.tiledPNG(tile: 100, across: 40, down: 40)
    /// 3000 × 2000 JPEG, orientation 6: a cover of it is turned and cropped after the copy that
    /// decodes it (`orientAndCrop`), which the limit must reach as well.
    static let bigTurnedJPEG = Fixtures.jpeg(width: 3000, height: 2000, orientation: 6)

    /// A limit that passes while the job runs stops it, also for a 100-row output, where the
    /// progress signal alone would come only at the end: the PNG loader's reads fail. The limit is
    /// a millisecond against a job of hundreds of them (no assertion on how long anything took:
    /// the machine may be loaded; `bench/` measures time).
    @Test(arguments: [100, 600])
    func aDecodeStopsOnceItsLimitPasses(side: Int) throws {
        let (source, cut) = (Self.bigPNG, VipsCut.exact(width: side, height: side))
        #expect(throws: VipsError.timedOut) { try thumbnail(source, cut, timeLimit: .milliseconds(1)) }
    }

    /// Work without reads (a cut from a decoded copy) is stopped at the next progress signal of
    /// the copy to memory (one per 128 output rows): a limit of a millisecond against a 1,000-row
    /// cut of a 16-megapixel copy.
    @Test func aCutFromACopyStopsAtAProgressSignal() throws {
        let copy = try decode(Self.bigPNG)
        #expect(throws: VipsError.timedOut) {
            _ = try Vips.thumbnail(
                of: .decoded(copy), cut: .exact(width: 1000, height: 1000), encoding: VipsEncoding(format: .png),
                options: options, timeLimit: .milliseconds(1))
        }
    }

    /// A limit already passed stops every path before its pixel work: the first read, or the
    /// signal at the start of the copy.
    @Test func everyPathHonoursAPassedLimit() throws {
        let cover = VipsCut.cover(width: 2000, height: 2000, crop: .attention)
        for input in Input.allCases {
            #expect(throws: VipsError.timedOut) {
                try thumbnail(Self.bigTurnedJPEG, cover, from: input, timeLimit: .zero)
            }
        }
        #expect(throws: VipsError.timedOut) { try decode(Self.bigPNG, width: 1024, height: 1024, timeLimit: .zero) }
        for bytes in [Fixtures.webp(width: 64, height: 48), Fixtures.gif(width: 64, height: 48, frames: 2)] {
            #expect(throws: VipsError.timedOut) {
                try thumbnail(bytes, .exact(width: 32, height: 24), timeLimit: .zero)
            }
        }
        // A cut from a decoded copy made without a limit: the copy's own signal stops it.
        let copy = try decode(Fixtures.png(width: 400, height: 300))
        #expect(throws: VipsError.timedOut) {
            try Vips.thumbnail(
                of: .decoded(copy), cut: .exact(width: 200, height: 150), encoding: VipsEncoding(format: .png),
                options: options, timeLimit: .zero)
        }
    }

    @Test func aLimitThatIsNotReachedChangesNothing() throws {
        let cut = VipsCut.cover(width: 400, height: 300, crop: .centre)
        let plain = try thumbnail(Self.bigTurnedJPEG, cut, format: .png)
        let limited = try thumbnail(Self.bigTurnedJPEG, cut, format: .png, timeLimit: .seconds(600))
        #expect(plain.buffer.bytes == limited.buffer.bytes)
        // Other failures keep their own error.
        let truncated = Array(Fixtures.jpeg(width: 64, height: 48).prefix(400))
        let error = #expect(throws: VipsError.self) {
            try thumbnail(truncated, .exact(width: 32, height: 24), timeLimit: .seconds(600))
        }
        guard case .decodeFailed = error else {
            Issue.record("expected decodeFailed, got \(String(describing: error))")
            return
        }
    }
}
