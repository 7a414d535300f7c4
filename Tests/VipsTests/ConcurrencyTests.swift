import Dispatch
import Synchronization
import TestSupport
import Testing
import Vips

@Suite("Vips.thumbnail under concurrency")
struct ConcurrencyTests {
    @Test func eightThreadsGetCorrectResults() throws {
        let sources: [[UInt8]] = [
            Fixtures.jpeg(width: 400, height: 300), Fixtures.png(width: 400, height: 300),
            Fixtures.webp(width: 400, height: 300), Fixtures.tiff(width: 400, height: 300),
        ]
        let formats: [VipsOutputFormat] = [.jpeg, .png, .webp, .avif]
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for round in 0..<6 {
                let source = sources[(thread + round) % sources.count]
                let format = formats[(thread + 2 * round) % formats.count]
                let width = 60 + 10 * thread + round
                do {
                    let result = try thumbnail(source, .init(width: width, format: format))
                    let decoded = try Fixtures.decode(result.buffer.bytes)
                    let expectedHeight = Int((Double(width) * 0.75).rounded())
                    let pixel = decoded.pixel(decoded.width / 4, decoded.height / 4)
                    if decoded.width != width || abs(decoded.height - expectedHeight) > 1
                        || !isClose(pixel, Fixtures.quadrantColours[0], tolerance: tolerance(of: format))
                    {
                        failures.withLock {
                            $0.append("thread \(thread) round \(round): \(decoded.width)x\(decoded.height) \(pixel)")
                        }
                    }
                } catch {
                    failures.withLock { $0.append("thread \(thread) round \(round): \(error)") }
                }
            }
        }
        let all = failures.withLock { $0 }
        #expect(all.isEmpty, "\(all)")
    }
}
