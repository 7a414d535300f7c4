import TestSupport
import Testing

@testable import ThumbnailCore

/// Animated sources: which format, whether the animation is kept, and the limits that make it a
/// still of its first frame (said, never silent); an animation is made from its original, never a
/// decoded copy (which holds one frame).
@Suite struct AnimationPlanTests {
    static let animatedGIF = SourceInfo(format: .gif, width: 400, height: 300, pageCount: 24, hasAlpha: true)
    static let animatedWebP = SourceInfo(format: .webp, width: 400, height: 300, pageCount: 24)
    static let stillGIF = SourceInfo(format: .gif, width: 400, height: 300, pageCount: 1, hasAlpha: true)
    static let tiffPages = SourceInfo(format: .tiff, width: 400, height: 300, pageCount: 5)

    @Test func formatsKeepAnAnimationWhereTheRequestLeavesTheChoice() {
        let both = RequestedFormat.negotiated(avif: true, webp: true)
        let avifOnly = RequestedFormat.negotiated(avif: true, webp: false)
        #expect(RequestedFormat.source.resolve(for: Self.animatedGIF) == .gif)
        #expect(RequestedFormat.source.resolve(for: Self.animatedWebP) == .webp)
        #expect(RequestedFormat.source.resolve(for: Self.stillGIF) == .png)
        #expect(both.resolve(for: Self.animatedGIF) == .webp, "AVIF cannot be animated")
        #expect(both.resolve(for: Self.stillGIF) == .avif)
        #expect(avifOnly.resolve(for: Self.animatedGIF) == .gif)
        #expect(RequestedFormat.negotiated(avif: false, webp: true).resolve(for: Self.animatedGIF) == .webp)
        #expect(RequestedFormat.exactly(.jpeg).resolve(for: Self.animatedGIF) == .jpeg)
        #expect(!Self.tiffPages.isAnimated, "a multi-page TIFF is not an animation")
        #expect(both.canonical == "auto+avif+webp" && avifOnly.canonical == "auto+avif")
    }

    func renderer(maxPixels: Int = 75_000_000, maxFrames: Int = 256, memory: Int = .max) -> ThumbnailRenderer<
        FakeImaging
    > {
        ThumbnailRenderer(
            imaging: FakeImaging(), maxSourcePixels: maxPixels, maxFrames: maxFrames, maxAnimationMemory: memory)
    }

    @Test func limitsMakeAStillOfTheFirstFrameAndSayWhich() {
        let spec = TransformSpec(width: 200)
        let kept = renderer().plan(Self.animatedGIF, spec)
        #expect(kept == RenderPlan(format: .gif, animated: true, firstFrameOnly: nil, decoded: Self.animatedGIF))
        #expect(renderer().plan(Self.animatedGIF, TransformSpec(width: 200, format: .exactly(.jpeg))).animated == false)
        #expect(
            renderer().plan(Self.animatedGIF, TransformSpec(width: 200, format: .exactly(.jpeg))).firstFrameOnly == nil)

        let frames = renderer(maxFrames: 23).plan(Self.animatedGIF, spec)
        #expect(frames.firstFrameOnly == .maxFrames && !frames.animated)
        #expect(frames.format == .png, "a still GIF with alpha: PNG, as for a still source")
        #expect(frames.decoded.pageCount == 1)
        #expect(renderer(maxFrames: 24).plan(Self.animatedGIF, spec).animated)

        let pixels = renderer(maxPixels: 400 * 300 * 24 - 1).plan(Self.animatedGIF, spec)
        #expect(pixels.firstFrameOnly == .maxPixels)
        let memory = renderer(memory: 1 << 20).plan(Self.animatedWebP, spec)
        #expect(memory.firstFrameOnly == .workBytes && memory.format == .webp && !memory.animated)
    }

    /// The estimate counts every frame kept: more frames, more memory; the still of an animation
    /// over a limit costs what a still does.
    @Test func theDecodeEstimateCountsEveryFrame() {
        let spec = TransformSpec(width: 200)
        let twelve = SourceInfo(format: .gif, width: 400, height: 300, pageCount: 12, hasAlpha: true)
        let still = renderer().estimate(Self.stillGIF, spec: spec)
        let estimate12 = renderer().estimate(twelve, spec: spec)
        let estimate24 = renderer().estimate(Self.animatedGIF, spec: spec)
        #expect(still < estimate12 && estimate12 < estimate24)
        #expect(renderer(maxFrames: 10).estimate(Self.animatedGIF, spec: spec) == still)
    }

    /// The estimate stays above what such jobs were measured to take (libvips 8.14, one job in a
    /// fresh process, the RSS rise in MiB; see DecodeMemory), and within a few times of it.
    @Test func theAnimationEstimateCoversWhatWasMeasured() {
        let mib = 1 << 20
        let cases: [(SourceInfo, TransformSpec, measured: Int)] = [
            (SourceInfo(format: .gif, width: 500, height: 500, pageCount: 100, hasAlpha: true), .init(width: 400), 79),
            (SourceInfo(format: .gif, width: 500, height: 500, pageCount: 100, hasAlpha: true), .init(width: 200), 23),
            (SourceInfo(format: .webp, width: 800, height: 600, pageCount: 50), .init(width: 400), 50),
            (
                SourceInfo(format: .webp, width: 800, height: 600, pageCount: 50),
                .init(width: 400, height: 400, fit: .cover), 118
            ),
            (SourceInfo(format: .gif, width: 640, height: 421, pageCount: 783, hasAlpha: true), .init(width: 320), 215),
        ]
        let renderer = renderer(maxPixels: 1_000_000_000, maxFrames: 1000)
        for (info, spec, measured) in cases {
            let estimate = renderer.estimate(info, spec: spec)
            #expect(renderer.plan(info, spec).animated)
            #expect(estimate >= measured * mib, "\(info.width)x\(info.height)x\(info.pageCount) → \(spec.width)")
            #expect(estimate <= measured * mib * 4, "\(estimate / mib) MiB for \(measured)")
        }
    }

    /// A second size of a cached animated original is made from it again (no fetch), never cut
    /// from the decoded copy a still made; the output keeps its frames.
    @Test func aNewSizeOfACachedAnimationIsMadeFromItsOriginal() async throws {
        let fetcher = FakeFetcher(["http://a/anim.gif": .success([40, 30, 0xA7, 24])])
        let imaging = FakeImaging()
        let pipeline = makePipeline(fetcher, imaging)
        let first = try text(await pipeline.thumbnail(request("http://a/anim.gif")).0)
        #expect(first == "w=100,h=75,frames=24")
        // A still (JPEG) of it makes a decoded copy of the first frame...
        let still = try text(
            await pipeline.thumbnail(request("http://a/anim.gif", [("w", "50"), ("format", "jpeg")])).0)
        #expect(still == "w=50,h=38")
        // ...which a new animated size must not be cut from (the fake throws if it is).
        let second = try text(await pipeline.thumbnail(request("http://a/anim.gif", [("w", "60")])).0)
        #expect(second == "w=60,h=45,frames=24")
        #expect(fetcher.count("http://a/anim.gif") == 1)
    }

    @Test func aStillOverALimitCarriesItsReason() async throws {
        let fetcher = FakeFetcher(["http://a/long.gif": .success([40, 30, 0xA7, 200])])
        let pipeline = makePipeline(fetcher, FakeImaging(), maxSourcePixels: 400 * 300 * 100)
        let variant = try await pipeline.thumbnail(request("http://a/long.gif")).0.get()
        #expect(variant.image.firstFrameOnly == .maxPixels)
        #expect(variant.image.frames == 1)
        #expect(variant.image.format == .png)
    }
}
