import Foundation
import TestSupport
import Testing
import Vips

@testable import ThumbnailService

/// New sizes of a recently used source are cut from a cached decoded copy: no fetch, no decode,
/// and the result matches a thumbnail made straight from the original.
@Suite struct DecodedCopyTests {
    static let photo = Fixtures.detailedJPEG(width: 2400, height: 1600)

    @Test func newSizesAreCutFromTheDecodedCopyWithoutDecodingAgain() async throws {
        let h = try Harness(routes: ["/p.jpg": .ok(Self.photo)])
        #expect(try await h.get(h.thumb("/p.jpg", "w=400")).status == 200)
        let stats = h.app.pipeline.statistics
        #expect(stats.decodes == 1)
        for width in [120, 150, 199, 250, 300, 350] {
            let response = try await h.get(h.thumb("/p.jpg", "w=\(width)"))
            #expect(response.status == 200)
            #expect(try response.image().width == width)
        }
        let after = h.app.pipeline.statistics
        #expect(after.decodes == 1)
        #expect(after.fromDecoded == 6)
        #expect(h.origin.requestCount(path: "/p.jpg") == 1)
        // Larger than half the copy: decoded again from the cached original, never upscaled.
        #expect(try await h.get(h.thumb("/p.jpg", "w=900")).status == 200)
        #expect(h.app.pipeline.statistics.decodes == 2)
        #expect(h.origin.requestCount(path: "/p.jpg") == 1)
    }

    @Test(arguments: ["w=200", "w=333", "w=180&h=180&fit=cover", "w=250&h=100&fit=fill", "w=300&h=150&fit=inside"])
    func aThumbnailCutFromTheCopyMatchesOneMadeFromTheOriginal(params: String) async throws {
        let h = try Harness(routes: ["/p.jpg": .ok(Self.photo)])
        // The first request leaves a decoded copy (1024 px); the second is cut from it.
        #expect(try await h.get(h.thumb("/p.jpg", "w=500&format=png")).status == 200)
        let cut = try await h.get(h.thumb("/p.jpg", "\(params)&format=png"))
        #expect(h.app.pipeline.statistics.fromDecoded == 1)
        let fromCopy = try cut.image()
        // Straight from the original bytes with libvips' own one-step thumbnail.
        let query = Dictionary(
            uniqueKeysWithValues: params.split(separator: "&").map { pair in
                let parts = pair.split(separator: "=")
                return (String(parts[0]), String(parts[1]))
            })
        let fit: VipsFit = query["fit"] == "cover" ? .cover : query["fit"] == "fill" ? .fill : .inside
        let options = VipsThumbnailOptions(
            width: Int(query["w"]!)!, height: query["h"].flatMap { Int($0) }, fit: fit, format: .png)
        let direct = try Self.photo.withUnsafeBytes { bytes in try Vips.thumbnail(of: bytes, options: options) }
        let reference = try Fixtures.decode(direct.buffer.bytes)
        #expect((fromCopy.width, fromCopy.height) == (reference.width, reference.height))
        guard fromCopy.width == reference.width, fromCopy.height == reference.height else { return }
        let mean = Fixtures.meanAbsoluteDifference(fromCopy, reference)
        #expect(mean < 3.0, "mean absolute difference \(mean)")  // of 255: about 1%
        let within = zip(fromCopy.samples, reference.samples).filter { abs(Int($0) - Int($1)) <= 12 }.count
        let share = Double(within) / Double(fromCopy.samples.count)
        #expect(share > 0.99, "\(share) of samples within 12 levels")
    }
}
