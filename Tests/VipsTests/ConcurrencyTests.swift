import TestSupport
import Testing
import Vips

@Suite("Vips.thumbnail under concurrency")
struct ConcurrencyTests {
    /// Orc is on only where it is safe: with it, libvips compiles SIMD code for every resize it
    /// builds, and liborc 0.4.33 (Debian bookworm's) allocates that code's memory without its
    /// lock — two worker threads building at once corrupted the heap under new-size load (1 in
    /// ~40 000 requests; AddressSanitizer caught it in `orc_code_allocate_codemem`). So it is on
    /// with a fixed liborc, or with libvips' compile and free calls serialised by CVipsShims.
    @Test func orcIsOnOnlyWhereItCannotRace() throws {
        let version = try #require(Vips.orcVersion, "this libvips is built with Orc")
        #expect(Vips.usesOrc == (Vips.orcIsSafe(version) || Vips.orcIsSerialised))
    }

    /// This test binary, like thumbd, links libvips, so the linker exports the wrappers and
    /// libvips binds to them: Orc stays on even with Debian bookworm's racing 0.4.33.
    @Test func libvipsCallsIntoOrcThroughTheSerialisingWrappers() {
        #expect(Vips.orcIsSerialised)
        #expect(Vips.usesOrc)
    }

    @Test func orcVersionsFromTheFixOnAreSafe() {
        #expect(!Vips.orcIsSafe("0.4.33"))
        #expect(!Vips.orcIsSafe("0.4.28"))
        #expect(!Vips.orcIsSafe("0.3.99"))
        #expect(Vips.orcIsSafe("0.4.34"))
        #expect(Vips.orcIsSafe("0.4.41"))
        #expect(Vips.orcIsSafe("0.5.0"))
        #expect(Vips.orcIsSafe("1.0.0"))
        #expect(!Vips.orcIsSafe("garbage"))
        #expect(!Vips.orcIsSafe(""))
    }

    /// Eight threads at once, from originals and from one decoded copy shared by all of them (the
    /// service cuts new sizes from one cached copy on every worker; sharing it unsafely once
    /// corrupted the heap under load).
    @Test func eightThreadsGetCorrectResultsFromOriginalsAndOneSharedCopy() async throws {
        let sources: [[UInt8]] = [
            Fixtures.jpeg(width: 400, height: 300), Fixtures.png(width: 400, height: 300),
            Fixtures.webp(width: 400, height: 300), Fixtures.tiff(width: 400, height: 300),
        ]
        let shared = try decode(Fixtures.jpeg(width: 400, height: 300))
        let formats: [VipsOutputFormat] = [.jpeg, .png, .webp, .avif]
        // Threads of their own, not `concurrentPerform`, whose iterations would take every
        // thread of the cooperative pool, and so every other test of the run, while this lasts.
        let failures = await TestThreads.run(8, name: "vips-eight") { thread in
            var failures: [String] = []
            for round in 0..<6 {
                let format = formats[(thread + 2 * round) % formats.count]
                let width = 60 + 10 * thread + round
                let height = Int((Double(width) * 0.75).rounded())
                let cut = VipsCut.exact(width: width, height: height)
                do {
                    let result: VipsThumbnail
                    if (thread + round) % 2 == 0 {
                        let source = sources[(thread + round) % sources.count]
                        result = try thumbnail(source, cut, format: format)
                    } else {
                        result = try Vips.thumbnail(
                            of: .decoded(shared), cut: cut, encoding: VipsEncoding(format: format), options: options)
                    }
                    let decoded = try Fixtures.decode(result.buffer.bytes)
                    let pixel = decoded.pixel(decoded.width / 4, decoded.height / 4)
                    if decoded.width != width || decoded.height != height
                        || !isClose(pixel, Fixtures.quadrantColours[0], tolerance: tolerance(of: format))
                    {
                        failures.append("thread \(thread) round \(round): \(decoded.width)x\(decoded.height) \(pixel)")
                    }
                } catch {
                    failures.append("thread \(thread) round \(round): \(error)")
                }
            }
            return failures
        }
        let all = failures.flatMap { $0 }
        #expect(all.isEmpty, "\(all)")
    }
}
