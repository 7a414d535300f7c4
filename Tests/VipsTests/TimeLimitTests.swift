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

    /// A limit a quarter into the job stops it soon after, also for a 100-row output, where the
    /// progress signal alone would come only at the end: the PNG loader's reads fail.
    @Test(arguments: [100, 600])
    func aDecodeStopsSoonAfterItsLimit(side: Int) throws {
        let (source, cut) = (Self.bigPNG, VipsCut.exact(width: side, height: side))
        // The whole job first: it also takes the process's one-time costs (Orc compiling the
        // resize kernels, ...), which would otherwise land in the limited one.
        let full = try fastest { _ = try thumbnail(source, cut) }
        let limited = measure {
            #expect(throws: VipsError.timedOut) { try thumbnail(source, cut, timeLimit: full / 4) }
        }
        #expect(limited < full * 0.8, "limited \(limited), whole \(full)")
    }

    /// Work without reads (a cut from a decoded copy) is stopped at the next progress signal of
    /// the copy to memory, one per 128 output rows: for 1,000 rows, soon after a limit a third in.
    @Test func aCutFromACopyStopsAtTheNextProgressSignal() throws {
        let copy = try decode(Self.bigPNG)
        func cut(_ limit: Duration?) throws(VipsError) {
            _ = try Vips.thumbnail(
                of: .decoded(copy), cut: .exact(width: 1000, height: 1000), encoding: VipsEncoding(format: .png),
                options: options, timeLimit: limit)
        }
        let full = try fastest { try cut(nil) }
        let limited = measure { #expect(throws: VipsError.timedOut) { try cut(full / 3) } }
        #expect(limited < full * 0.8, "limited \(limited), whole \(full)")
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

    /// The shorter of two runs: the machine may be busy with other tests for one of them.
    private func fastest(_ body: () throws -> Void) rethrows -> Duration {
        min(try measure(body), try measure(body))
    }

    private func measure(_ body: () throws -> Void) rethrows -> Duration {
        let start = ContinuousClock.now
        try body()
        return ContinuousClock.now - start
    }
}
