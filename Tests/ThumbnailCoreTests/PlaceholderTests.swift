import Foundation
import Primitives
import TestSupport
import Testing

@testable import ThumbnailCore

/// The placeholder algorithms on pixels made here, and `/info`'s way through the pipeline over
/// the fakes. (Their agreement with the reference encoders and decoders is checked in
/// ThumbnailServiceTests' `PlaceholderReferenceTests`.)
@Suite struct PlaceholderTests {
    /// `width` × `height` pixels, each `rgba`.
    static func flat(_ rgba: [UInt8], _ width: Int = 8, _ height: Int = 6) -> RGBAPixels {
        RGBAPixels(
            width: width, height: height, samples: Array([[UInt8]](repeating: rgba, count: width * height).joined()))!
    }

    /// Pixels from a list of (RGBA, how many), in order, one row.
    static func row(_ runs: [([UInt8], Int)]) -> RGBAPixels {
        let samples = runs.flatMap { run in Array([[UInt8]](repeating: run.0, count: run.1).joined()) }
        return RGBAPixels(width: samples.count / 4, height: 1, samples: samples)!
    }

    static func base83(_ text: Substring) -> Int {
        let digits = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz#$%*+,-.:;=?@[]^_{|}~")
        return text.reduce(0) { $0 * 83 + digits.firstIndex(of: $1)! }
    }

    @Test func base64IsTheStandardAlphabetPadded() {
        let vectors = [
            ("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg=="), ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ]
        for (text, encoded) in vectors { #expect(Base64.encode(Array(text.utf8)) == encoded) }
        #expect(Base64.encode([0xFB, 0xFF]) == "+/8=")
    }

    /// 4 × 3 terms ("L") and the colour itself as the average. (Not "no detail": BlurHash's
    /// basis has no half-pixel offset, so even a flat image has odd terms; the reference encoders
    /// agree, `PlaceholderReferenceTests`.)
    @Test func aFlatImagesBlurHashIsItsColour() {
        let hash = BlurHash.encode(Self.flat([200, 100, 50, 255]))
        #expect(hash.count == 4 + 2 * 12)
        #expect(hash.hasPrefix("L"))
        #expect(Self.base83(hash.dropFirst(2).prefix(4)) == 200 << 16 | 100 << 8 | 50)
    }

    /// BlurHash has no alpha: transparent pixels are painted in the visible average, so a red
    /// image with a clear half stays red, whatever colour the clear pixels hold.
    @Test func blurHashPaintsTransparencyInTheVisibleColour() {
        let hash = BlurHash.encode(Self.row([([255, 0, 0, 255], 8), ([0, 0, 0, 0], 8)]))
        #expect(Self.base83(hash.dropFirst(2).prefix(4)) == 255 << 16)
    }

    /// The average colour reads back from the first bytes, as the reference's
    /// `thumbHashToAverageRGBA` reads it; alpha adds its flag and a byte.
    @Test func thumbHashKeepsTheAverageColourAndFlagsAlpha() {
        let hash = ThumbHash.encode(Self.flat([200, 100, 50, 255], 10, 10))
        // 27 luminance, 5 + 5 colour AC terms at four bits each after the five header bytes.
        #expect(hash.count == 5 + 19)
        let header = Int(hash[0]) | Int(hash[1]) << 8 | Int(hash[2]) << 16
        #expect(header >> 23 == 0)
        let l = Double(header & 63) / 63
        let p = Double(header >> 6 & 63) / 31.5 - 1
        let q = Double(header >> 12 & 63) / 31.5 - 1
        let b = l - 2 / 3 * p
        let r = (3 * l - b + q) / 2
        let g = r - q
        for (value, expected) in [(r, 200.0), (g, 100), (b, 50)] { #expect(abs(value * 255 - expected) < 5) }

        let clear = ThumbHash.encode(Self.row([([200, 100, 50, 255], 5), ([0, 0, 0, 0], 5)]))
        #expect(clear[2] & 0x80 != 0)
        // Landscape (bit 15 of the second header), and one byte of alpha average and scale.
        #expect(clear[4] & 0x80 != 0)
        #expect(clear[5] & 15 == 8)  // half opaque: 15 × 0.5, rounded up
    }

    @Test func theDominantColourIsTheMostPopulatedBucketsMean() {
        #expect(DominantColour.hex(of: Self.row([([255, 0, 0, 255], 70), ([0, 0, 255, 255], 30)])) == "#ff0000")
        // One bucket (224...255 red): the mean of its pixels, not the bucket's middle.
        #expect(DominantColour.hex(of: Self.row([([250, 0, 0, 255], 1), ([230, 0, 0, 255], 1)])) == "#f00000")
        // Clear pixels count for nothing, half-clear ones for half.
        #expect(
            DominantColour.hex(of: Self.row([([255, 255, 255, 0], 60), ([0, 200, 0, 255], 40)])) == "#00c800")
        #expect(
            DominantColour.hex(of: Self.row([([255, 255, 255, 100], 60), ([0, 200, 0, 255], 40)])) == "#00c800")
        // A tie goes to the lower red, then green, then blue level.
        #expect(DominantColour.hex(of: Self.row([([255, 0, 0, 255], 5), ([0, 0, 255, 255], 5)])) == "#0000ff")
        #expect(DominantColour.hex(of: Self.flat([9, 9, 9, 0])) == "#000000")
    }

    @Test func pixelsAreWidenedToRGBA() {
        let grey: [UInt8] = [10, 20]
        let greyAlpha: [UInt8] = [10, 0, 20, 255]
        let widened = grey.withUnsafeBytes { RGBAPixels(width: 2, height: 1, bands: 1, interleaved: $0) }
        #expect(widened?.samples == [10, 10, 10, 255, 20, 20, 20, 255])
        #expect(widened?.hasTransparency == false)
        let withAlpha = greyAlpha.withUnsafeBytes { RGBAPixels(width: 2, height: 1, bands: 2, interleaved: $0) }
        #expect(withAlpha?.samples == [10, 10, 10, 0, 20, 20, 20, 255])
        #expect(withAlpha?.hasTransparency == true)
        #expect(grey.withUnsafeBytes { RGBAPixels(width: 3, height: 1, bands: 1, interleaved: $0) } == nil)
        #expect(RGBAPixels(width: 0, height: 1, samples: []) == nil)
    }

    /// `/info` through the pipeline: one job however many ask, made from the one fetch, cached
    /// under its own kind, and gone with a purge of its source.
    @Test func infoIsMadeOnceCachedAndPurgedWithItsSource() async throws {
        let photo = "http://origin.example/photo.jpg"
        let fetcher = FakeFetcher([photo: .success([100, 50])], gate: Gate())
        let pipeline = makePipeline(fetcher, FakeImaging())
        let source = try SourceURL(parsing: photo)
        async let outcomes = withTaskGroup(of: FakePipeline.Outcome.self) { group in
            for _ in 0..<10 { group.addTask { await pipeline.info(source).1 } }
            return await group.reduce(into: [FakePipeline.Outcome]()) { $0.append($1) }
        }
        #expect(await eventually(pipeline.metrics) { $0.coalesced == 9 })
        fetcher.gate.open()
        let all = await outcomes
        #expect(all.filter { $0 == .miss }.count == 1)
        let (result, outcome) = await pipeline.info(source)
        #expect(outcome == .hit)
        let document = try result.get().image
        #expect(document.mediaType == "application/json" && document.format == nil)
        let json = String(decoding: document.bytes.array, as: UTF8.self)
        #expect(json.hasPrefix("{\"width\":1000,\"height\":500,\"format\":\"jpeg\",\"hasAlpha\":false,\"frames\":1,"))
        #expect(json.contains("\"dominantColor\":\"#808080\""))
        let metrics = pipeline.metrics
        #expect(metrics.renders.infos == 1 && metrics.renders.thumbnails == 0)
        #expect(metrics.cache[.info].entries == 1 && metrics.cache[.original].entries == 1)
        #expect(fetcher.count(photo) == 1)
        #expect(pipeline.purge(source).entries == 2)
        #expect(pipeline.metrics.cache[.info].entries == 0)
        #expect(await pipeline.info(source).1 == .miss)
    }
}

extension ThumbnailPipeline {
    /// Async bridge for tests.
    func info(_ source: SourceURL) async -> (Result<Variant, ThumbnailError>, Outcome) {
        await withCheckedContinuation { continuation in
            info(source) { result, outcome in continuation.resume(returning: (result, outcome)) }
        }
    }
}
