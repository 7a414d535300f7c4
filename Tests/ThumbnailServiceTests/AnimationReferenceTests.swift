import Foundation
import TestSupport
import Testing

/// The reference for animated images checks itself: what `PillowReference` makes is what was
/// asked (frames, rectangles, disposal, delays, loop count, transparency) as Pillow reads it back
/// and as libvips reads it, so that `AnimationServiceTests` can trust it to judge thumbd's output.
/// Pillow comes from the reference venv (scripts/pyref.sh); without it these fail.
@Suite struct AnimationReferenceTests {
    static let sources: [String: AnimationSource] = ["disposalModes": .disposalModes, "growingBars": .growingBars]

    /// Each frame Pillow reads equals the expected composited canvas (`AnimationSource.composited`):
    /// every cell within 1 (Pillow's 8-bit rounding of premultiplied means), the transparent share
    /// exact.
    static func expectFrames(
        _ description: AnimationDescription, _ source: AnimationSource, _ what: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let expected = source.composited()
        for (index, (frame, canvas)) in zip(description.frames, expected).enumerated() {
            let grid = FrameGrid(pixels: canvas, width: source.width, height: source.height)
            let worst = grid.differences(to: frame.grid).max() ?? 0
            #expect(worst <= 1, "\(what) frame \(index): a cell differs by \(worst)", sourceLocation: sourceLocation)
            let clear = stride(from: 3, to: canvas.count, by: 4).filter { canvas[$0] < 128 }.count
            let share = Double(clear) / Double(source.width * source.height)
            #expect(
                abs(frame.transparentFraction - share) < 1e-9,
                "\(what) frame \(index): transparent \(frame.transparentFraction), expected \(share)",
                sourceLocation: sourceLocation)
        }
    }

    @Test(arguments: ["disposalModes", "growingBars"])
    func aGeneratedGIFIsWhatWasAsked(_ name: String) async throws {
        let source = try #require(Self.sources[name])
        let gif = try await PillowReference.makeAnimatedGIF(source)
        #expect(gif.count < 100_000, "\(name): \(gif.count) bytes")
        #expect(Array(gif.prefix(6)) == Array("GIF89a".utf8))
        let description = try await PillowReference.describe(gif)
        #expect(description.format == "GIF")
        #expect(description.width == source.width && description.height == source.height)
        try #require(description.frames.count == source.frames.count, "\(name)")
        #expect(description.durations == source.durations)
        #expect(description.plays == source.plays)
        // NETSCAPE2.0 as stored: repeats after the first play, 0 forever.
        #expect(description.loop == (source.plays == 0 ? 0 : source.plays - 1))
        // The frames are the rectangles and disposals asked for, not whole canvases.
        #expect(description.frames.map(\.region) == source.frames.map { [$0.x, $0.y, $0.width, $0.height] })
        #expect(description.frames.map(\.disposal) == source.frames.map(\.disposal))
        Self.expectFrames(description, source, "\(name).gif")
    }

    @Test(arguments: ["disposalModes", "growingBars"])
    func aGeneratedWebPIsWhatWasAsked(_ name: String) async throws {
        let source = try #require(Self.sources[name])
        let webp = try await PillowReference.makeAnimatedWebP(source)
        #expect(webp.count < 100_000, "\(name): \(webp.count) bytes")
        #expect(Array(webp[8..<12]) == Array("WEBP".utf8))
        let description = try await PillowReference.describe(webp)
        #expect(description.format == "WEBP")
        #expect(description.width == source.width && description.height == source.height)
        try #require(description.frames.count == source.frames.count, "\(name)")
        #expect(description.durations == source.durations)
        #expect(description.plays == source.plays)
        #expect(description.loop == source.plays)
        Self.expectFrames(description, source, "\(name).webp")
    }

    /// libvips (thumbd's decoder, through `Fixtures.decode`) agrees with Pillow on the frame
    /// count, the canvas and the first frame.
    @Test(arguments: ["disposalModes", "growingBars"])
    func libvipsReadsTheSameFrames(_ name: String) async throws {
        let source = try #require(Self.sources[name])
        for (format, bytes) in [
            ("gif", try await PillowReference.makeAnimatedGIF(source)),
            ("webp", try await PillowReference.makeAnimatedWebP(source)),
        ] {
            let decoded = try Fixtures.decode(bytes)
            #expect(decoded.pageCount == source.frames.count, "\(name).\(format)")
            #expect(decoded.width == source.width && decoded.height == source.height, "\(name).\(format)")
            let description = try await PillowReference.describe(bytes)
            let first = FrameGrid(
                pixels: decoded.samples, width: decoded.width, height: decoded.height, bands: decoded.bands)
            let worst = first.differences(to: description.frames[0].grid).max() ?? 0
            #expect(worst <= 1, "\(name).\(format): libvips' first frame differs from Pillow's by \(worst)")
        }
    }

    /// The disposal sample means something: had each frame been kept (disposal 1), frames 2, 3
    /// and the one after a disposal-2 frame would look different in whole regions — so a
    /// thumbnailer that loses disposal fails the comparisons with it.
    @Test func theDisposalSampleDependsOnDisposal() async throws {
        let source = AnimationSource.disposalModes
        var kept = source
        for index in kept.frames.indices { kept.frames[index].disposal = 1 }
        let description = try await PillowReference.describe(try await PillowReference.makeAnimatedGIF(source))
        let ignoring = kept.composited()
        var differing: [Int] = []
        for (index, canvas) in ignoring.enumerated() {
            let grid = FrameGrid(pixels: canvas, width: source.width, height: source.height)
            if (grid.differences(to: description.frames[index].grid).max() ?? 0) > 100 { differing.append(index) }
        }
        // Frame 2 shows the hole frame 1's disposal 2 left (red without it); frame 3 is without
        // the green frame 2's disposal 3 took back; frames 4 and 5 keep both.
        #expect(differing == [2, 3, 4, 5])
    }
}
