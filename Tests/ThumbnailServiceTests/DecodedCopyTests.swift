import Foundation
import TestSupport
import Testing
import Vips

@testable import ThumbnailService

/// The first size of a source is streamed from the original; a later size makes a decoded copy
/// (one decode, from the cached original), and sizes after that are cut from the copy: no fetch,
/// no decode, and the result matches a thumbnail made straight from the original.
@Suite struct DecodedCopyTests {
    static let photo = Fixtures.detailedJPEG(width: 2400, height: 1600)

    @Test func newSizesAreCutFromTheDecodedCopyWithoutDecodingAgain() async throws {
        let h = try Harness(routes: ["/p.jpg": .ok(Self.photo)])
        #expect(try await h.get(h.thumb("/p.jpg", "w=400")).status == 200)
        var renders = h.app.pipeline.metrics.renders
        #expect((renders.fromOriginal, renders.copiesMade, renders.fromCopy) == (1, 0, 0))
        for width in [120, 150, 199, 250, 300, 350] {
            let response = try await h.get(h.thumb("/p.jpg", "w=\(width)"))
            #expect(response.status == 200)
            #expect(try response.image().width == width)
        }
        renders = h.app.pipeline.metrics.renders
        #expect((renders.fromOriginal, renders.copiesMade, renders.fromCopy) == (1, 1, 5))
        #expect(h.origin.requestCount(path: "/p.jpg") == 1)
        // Larger than half the copy: made from the cached original again, never upscaled.
        #expect(try await h.get(h.thumb("/p.jpg", "w=900")).status == 200)
        renders = h.app.pipeline.metrics.renders
        #expect(renders.decodes == 3)
        #expect(h.origin.requestCount(path: "/p.jpg") == 1)
    }

    @Test(arguments: ["w=200", "w=333", "w=180&h=180&fit=cover", "w=250&h=100&fit=fill", "w=300&h=150&fit=inside"])
    func aThumbnailCutFromTheCopyMatchesOneMadeFromTheOriginal(params: String) async throws {
        let h = try Harness(routes: ["/p.jpg": .ok(Self.photo)])
        // The first request is streamed from the original; the second makes the copy (1024 px).
        #expect(try await h.get(h.thumb("/p.jpg", "w=500&format=png")).status == 200)
        #expect(try await h.get(h.thumb("/p.jpg", "w=100&format=png")).status == 200)
        #expect(h.app.pipeline.metrics.renders.copiesMade == 1)
        let cut = try await h.get(h.thumb("/p.jpg", "\(params)&format=png"))
        #expect(h.app.pipeline.metrics.renders.fromCopy == 1)
        let fromCopy = try cut.image()
        // The same request on a fresh instance: its first size, streamed from the original.
        let fresh = try Harness(routes: ["/p.jpg": .ok(Self.photo)])
        let direct = try await fresh.get(fresh.thumb("/p.jpg", "\(params)&format=png"))
        #expect(fresh.app.pipeline.metrics.renders.fromOriginal == 1)
        let reference = try direct.image()
        #expect((fromCopy.width, fromCopy.height) == (reference.width, reference.height))
        guard fromCopy.width == reference.width, fromCopy.height == reference.height else { return }
        let mean = Fixtures.meanAbsoluteDifference(fromCopy, reference)
        #expect(mean < 3.0, "mean absolute difference \(mean)")  // of 255: about 1%
        let within = zip(fromCopy.samples, reference.samples).filter { abs(Int($0) - Int($1)) <= 12 }.count
        let share = Double(within) / Double(fromCopy.samples.count)
        #expect(share > 0.99, "\(share) of samples within 12 levels")
    }
}
