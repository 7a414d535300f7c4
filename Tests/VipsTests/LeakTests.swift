import TestSupport
import Testing
import Vips

#if canImport(Glibc)
    import Glibc
#endif

@Suite("Vips leaks")
struct LeakTests {
    @Test func everyPathUnrefsItsImages() throws {
        let inputs: [([UInt8], VipsThumbnailOptions)] = [
            (Fixtures.jpeg(width: 200, height: 100), .init(width: 50)),
            (Fixtures.png(width: 64, height: 64, alpha: true), .init(width: 30, fit: .cover, format: .jpeg)),
            (Fixtures.jpegWithICC(width: 40, height: 40), .init(width: 20, height: 10, fit: .fill, format: .webp)),
            (Fixtures.cmykJPEG(width: 40, height: 40), .init(width: 20, format: .png)),
            (Array(Fixtures.jpeg(width: 200, height: 100).prefix(400)), .init(width: 50)),  // decode fails
            (Fixtures.svg(), .init(width: 10)),  // blocked
            (Fixtures.jpeg(width: 20, height: 20), .init(width: 10, quality: 0)),  // invalid
        ]
        func runAll() {
            for (bytes, options) in inputs {
                _ = try? thumbnail(bytes, options)
                _ = try? header(bytes)
            }
        }
        runAll()  // warm up lazily created singletons
        let iterations = 100
        let before = quietCount()
        for _ in 0..<iterations { runAll() }
        let after = quietCount()
        // One leaked object per call would add 100 × 14 = 1 400, and a leak stays. The count is
        // process-wide and tests running in parallel have images alive for a moment (a service
        // test's decode pipeline holds dozens; a CI run once added ~600 to a single sample), so
        // each count is the lowest of 20 samples over ~100 ms, and the bar is half the smallest
        // leak's signal.
        let oneLeakPerCall = iterations * inputs.count * 2
        #expect(after - before < oneLeakPerCall / 2, "live vips objects \(before) → \(after)")
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
