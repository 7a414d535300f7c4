import TestSupport
import Testing
import Vips

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
        let before = Fixtures.liveVipsObjectCount()
        for _ in 0..<60 { runAll() }
        let after = Fixtures.liveVipsObjectCount()
        // One leaked object per call would add 60 × 14 = 840. The count is process-wide: tests
        // running in parallel (service tests keep decoded images in their caches) add a few
        // hundred at most, so the bar is half the smallest leak's signal.
        let oneLeakPerCall = 60 * inputs.count * 2
        #expect(after - before < oneLeakPerCall / 2, "live vips objects \(before) → \(after)")
    }
}
