import Foundation
import TestSupport
import Testing
import ThumbnailCore

@testable import ThumbnailService

/// Issue 37: an animated source stays animated — checked with an independent decoder (Pillow,
/// `PillowReference`) against sources it made, whose look depends on disposal, transparency,
/// per-frame delays and the loop count (`AnimationSource.disposalModes`, `.growingBars`).
///
/// Each output frame is compared with the source's frame as a browser composites it, resized by
/// Pillow to the thumbnail's size, on an 8 × 8 grid of premultiplied means (`Tolerance`).
@Suite struct AnimationServiceTests {
    /// How close a thumbnail's frame must be to the reference frame (0...255 per premultiplied
    /// channel). Measured with libvips 8.14's `vips thumbnail` on both samples at 80 px wide
    /// (cells of 10 × 7.5 and 10 × 6.6 px) to GIF, WebP at Q=80 and JPEG at Q=80, against
    /// Pillow's Lanczos: flat cells differed by at most 2 (GIF), 4 (WebP), 1 (JPEG); edge cells by
    /// 4 (GIF), 34 (WebP), 8 (JPEG); frame means by 1.2; transparent shares by 0.001.
    enum Tolerance {
        /// A cell with no edge of the source within a Lanczos-3 kernel's reach of it: only the
        /// two resizers' rounding, GIF's palette and WebP's or JPEG's quantisation of a flat
        /// colour move it — 3× the largest measured. A lost disposal, a missing or shifted frame
        /// or lost transparency moves such a cell by the step between two sample colours: 255 in
        /// `disposalModes`, at least 68 in `growingBars`.
        static let flatCell = 12.0
        /// A cell an edge crosses: GIF's 1-bit alpha rounds a half-covered pixel column to 0 or
        /// 255 and WebP stores chroma at half resolution, smearing a red–blue step over a pixel
        /// or two — at 10-px cells, 255 × 2 / 10 ≈ 51. Loose on purpose; the flat cells judge.
        static let edgeCell = 64.0
        /// The mean of a whole frame: edge errors mostly cancel; a wrong region of a tenth of
        /// the frame would move it by ~25.
        static let frameMean = 4.0
        /// The share of (mostly) transparent pixels.
        static let transparentShare = 0.02
        /// Flat cells each sample frame has at 80 px wide (at least 9 of 64): the comparison
        /// stands on them, so a change of sample or size that leaves too few is an error.
        static let fewestFlatCells = 8
    }

    static let sources: [String: AnimationSource] = ["disposalModes": .disposalModes, "growingBars": .growingBars]

    static func source(_ name: String) throws -> AnimationSource { try #require(sources[name], "no sample \(name)") }

    static func gif(_ name: String = "disposalModes") async throws -> [UInt8] {
        try await PillowReference.makeAnimatedGIF(try source(name))
    }

    /// Each output frame against the same reference frame (the source's, described at the
    /// output's size), flattened onto `background` for an opaque output format.
    static func expectFramesClose(
        _ output: [AnimationDescription.Frame], _ reference: [AnimationDescription.Frame],
        flattenedOn background: [UInt8]? = nil, _ what: String, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        for (index, (made, wanted)) in zip(output, reference).enumerated() {
            let expected = background.map { wanted.grid.flattened(on: $0) } ?? wanted.grid
            let differences = expected.differences(to: made.grid)
            let flat = differences.indices.filter { wanted.flat[$0] }
            #expect(
                flat.count >= Tolerance.fewestFlatCells, "\(what) frame \(index): \(flat.count) flat cells",
                sourceLocation: sourceLocation)
            let worstFlat = flat.map { differences[$0] }.max() ?? 0
            let worstEdge = differences.indices.filter { !wanted.flat[$0] }.map { differences[$0] }.max() ?? 0
            #expect(
                worstFlat <= Tolerance.flatCell, "\(what) frame \(index): a flat cell differs by \(worstFlat)",
                sourceLocation: sourceLocation)
            #expect(
                worstEdge <= Tolerance.edgeCell, "\(what) frame \(index): an edge cell differs by \(worstEdge)",
                sourceLocation: sourceLocation)
            let wantedMean = (0..<4).map { band in
                guard let background else { return wanted.mean[band] }
                return band == 3 ? 255 : wanted.mean[band] + Double(background[band]) * (1 - wanted.mean[3] / 255)
            }
            let meanOff = zip(wantedMean, made.mean).map { abs($0 - $1) }.max() ?? 0
            #expect(
                meanOff <= Tolerance.frameMean, "\(what) frame \(index): mean \(made.mean), wanted \(wantedMean)",
                sourceLocation: sourceLocation)
            let share = background == nil ? wanted.transparentFraction : 0
            #expect(
                abs(made.transparentFraction - share) <= Tolerance.transparentShare,
                "\(what) frame \(index): transparent \(made.transparentFraction), wanted \(share)",
                sourceLocation: sourceLocation)
        }
    }

    /// An animated answer: its format, every frame (delays, loop count, pixels) against the
    /// source's, the size asked for, and no first-frame header.
    static func expectAnimated(
        _ response: TestHTTPResponse, from source: [UInt8], as format: String, type: String, width: Int,
        _ what: String, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        try #require(response.status == 200, "\(what): \(response.text.prefix(300))", sourceLocation: sourceLocation)
        #expect(response.header("content-type") == type, "\(what)", sourceLocation: sourceLocation)
        #expect(response.header("x-thumbd-first-frame") == nil, "\(what)", sourceLocation: sourceLocation)
        let output = try await PillowReference.describe(response.body)
        let reference = try await PillowReference.describe(source, resizedTo: (output.width, output.height))
        #expect(output.format == format, "\(what)", sourceLocation: sourceLocation)
        #expect(output.width == width, "\(what): \(output.width) × \(output.height)", sourceLocation: sourceLocation)
        let height = Double(width * reference.height) / Double(reference.width)
        #expect(abs(Double(output.height) - height) <= 1, "\(what): the aspect ratio", sourceLocation: sourceLocation)
        try #require(
            output.frames.count == reference.frames.count,
            "\(what): \(output.frames.count) frames, the source has \(reference.frames.count)",
            sourceLocation: sourceLocation)
        #expect(output.durations == reference.durations, "\(what)", sourceLocation: sourceLocation)
        #expect(
            output.plays == reference.plays,
            "\(what): plays \(output.plays) (stored \(output.loop.map(String.init) ?? "-"))",
            sourceLocation: sourceLocation)
        expectFramesClose(output.frames, reference.frames, what, sourceLocation: sourceLocation)
    }

    /// A still answer of the first frame: one frame, close to the source's first composited
    /// frame (flattened onto white for JPEG, as thumbd flattens).
    static func expectFirstFrame(
        _ response: TestHTTPResponse, from source: [UInt8], type: String, _ what: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        try #require(response.status == 200, "\(what): \(response.text.prefix(300))", sourceLocation: sourceLocation)
        #expect(response.header("content-type") == type, "\(what)", sourceLocation: sourceLocation)
        let output = try await PillowReference.describe(response.body)
        try #require(output.frames.count == 1, "\(what): \(output.frames.count) frames", sourceLocation: sourceLocation)
        let reference = try await PillowReference.describe(source, resizedTo: (output.width, output.height))
        expectFramesClose(
            output.frames, Array(reference.frames.prefix(1)),
            flattenedOn: type == "image/jpeg" ? [255, 255, 255] : nil, what,
            sourceLocation: sourceLocation)
    }

    @Test(arguments: ["disposalModes", "growingBars"])
    func aGIFStaysAnAnimatedGIF(_ name: String) async throws {
        let gif = try await Self.gif(name)
        let h = try Harness(routes: ["/a.gif": .ok(gif, contentType: "image/gif")])
        let response = try await h.get(h.thumb("/a.gif", "w=80"))
        try await Self.expectAnimated(
            response, from: gif, as: "GIF", type: "image/gif", width: 80, name)
    }

    @Test(arguments: ["disposalModes", "growingBars"])
    func aGIFAsWebPIsAnAnimatedWebP(_ name: String) async throws {
        let gif = try await Self.gif(name)
        let h = try Harness(routes: ["/a.gif": .ok(gif, contentType: "image/gif")])
        let response = try await h.get(h.thumb("/a.gif", "w=80&format=webp"))
        try await Self.expectAnimated(
            response, from: gif, as: "WEBP", type: "image/webp", width: 80, "\(name) as webp")
    }

    @Test(arguments: ["disposalModes", "growingBars"])
    func aWebPStaysAnAnimatedWebP(_ name: String) async throws {
        let webp = try await PillowReference.makeAnimatedWebP(try Self.source(name))
        let h = try Harness(routes: ["/a.webp": .ok(webp, contentType: "image/webp")])
        let response = try await h.get(h.thumb("/a.webp", "w=80"))
        try await Self.expectAnimated(
            response, from: webp, as: "WEBP", type: "image/webp", width: 80, "\(name).webp")
    }

    /// `format=auto` picks animated WebP when `Accept` allows it, also when it prefers AVIF
    /// (libvips 8.14 writes no animated AVIF), and varies on `Accept`.
    @Test func autoPicksAnimatedWebPWhenAccepted() async throws {
        let gif = try await Self.gif()
        let h = try Harness(routes: ["/a.gif": .ok(gif, contentType: "image/gif")])
        for accept in ["image/webp,*/*", "image/avif,image/webp,*/*"] {
            let response = try await h.get(h.thumb("/a.gif", "w=80&format=auto"), [("Accept", accept)])
            #expect(response.header("vary") == "Accept", "\(accept)")
            try await Self.expectAnimated(response, from: gif, as: "WEBP", type: "image/webp", width: 80, accept)
        }
    }

    /// `format=jpeg` and `png` give the first frame as a still (JPEG on white, PNG with its
    /// transparency), as asked — no first-frame header, which is for a cap.
    @Test(arguments: ["jpeg", "png"])
    func aStillFormatGivesTheFirstFrame(_ format: String) async throws {
        let gif = try await Self.gif()
        let h = try Harness(routes: ["/a.gif": .ok(gif, contentType: "image/gif")])
        let response = try await h.get(h.thumb("/a.gif", "w=80&format=\(format)"))
        try await Self.expectFirstFrame(response, from: gif, type: "image/\(format)", format)
        #expect(response.header("x-thumbd-first-frame") == nil)
    }

    /// AVIF (libvips 8.14 writes no animated AVIF): one frame. Pillow 10.4 reads no AVIF, so
    /// libvips counts the pages.
    @Test func avifGivesTheFirstFrame() async throws {
        let gif = try await Self.gif()
        let h = try Harness(routes: ["/a.gif": .ok(gif, contentType: "image/gif")])
        let response = try await h.get(h.thumb("/a.gif", "w=80&format=avif"))
        try #require(response.status == 200, "\(response.text.prefix(300))")
        #expect(response.header("content-type") == "image/avif")
        let image = try response.image()
        #expect(image.pageCount == 1)
        #expect((image.width, image.height) == (80, 60))
    }

    /// Past `--max-frames` the answer is the first frame as a still, saying so in
    /// `X-Thumbd-First-Frame: max-frames` — for the default format and for WebP; at the cap the
    /// animation is whole.
    @Test func pastMaxFramesTheFirstFrameIsAnswered() async throws {
        let gif = try await Self.gif()  // six frames
        let setting = try #require(ServiceConfiguration.settings.first { $0.name == "max-frames" }, "no --max-frames")
        var problems: [String] = []
        let capped = try Harness(routes: ["/a.gif": .ok(gif, contentType: "image/gif")]) {
            if let problem = setting.apply(&$0, "5") { problems.append(problem) }
        }
        let atCap = try Harness(routes: ["/a.gif": .ok(gif, contentType: "image/gif")]) {
            if let problem = setting.apply(&$0, "6") { problems.append(problem) }
        }
        #expect(problems.isEmpty, "\(problems)")
        // The still is made as a still GIF source's would be: PNG (the sample has transparency).
        for (query, type, stillType) in [
            ("w=80", "image/gif", "image/png"), ("w=80&format=webp", "image/webp", "image/webp"),
        ] {
            let response = try await capped.get(capped.thumb("/a.gif", query))
            try await Self.expectFirstFrame(response, from: gif, type: stillType, "capped \(query)")
            #expect(response.header("x-thumbd-first-frame") == "max-frames", "\(query)")
            let whole = try await atCap.get(atCap.thumb("/a.gif", query))
            try await Self.expectAnimated(
                whole, from: gif, as: type == "image/gif" ? "GIF" : "WEBP", type: type, width: 80, "at the cap \(query)"
            )
        }
    }

    /// The pixel cap counts every frame: a source whose frames together pass it (one alone
    /// does not) is answered with its first frame, `X-Thumbd-First-Frame: max-pixels`.
    @Test func pastThePixelCapTheFirstFrameIsAnswered() async throws {
        let gif = try await Self.gif()  // six frames of 160 × 120
        let h = try Harness(routes: ["/a.gif": .ok(gif, contentType: "image/gif")]) {
            $0.processing.maxSourcePixels = 160 * 120 * 2
        }
        let response = try await h.get(h.thumb("/a.gif", "w=80"))
        try await Self.expectFirstFrame(response, from: gif, type: "image/png", "over the pixel cap")
        #expect(response.header("x-thumbd-first-frame") == "max-pixels")
    }

    /// A source made of many tiny frames (a cheap way to ask for a lot of work) is, under the
    /// defaults (256 frames), answered with its first frame: 200, a still, the header — and its
    /// 304 and its cache hit keep saying so.
    @Test func manyFramesUnderTheDefaultsGiveAStillThatSaysSo() async throws {
        let gif = Fixtures.longAnimation(.gif, width: 8, height: 8, frames: 300)
        let h = try Harness(routes: ["/many.gif": .ok(gif, contentType: "image/gif")])
        let first = try await h.get(h.thumb("/many.gif", "w=4"))
        #expect(first.status == 200)
        #expect(first.header("x-thumbd-first-frame") == "max-frames")
        #expect(first.header("content-type") == "image/jpeg", "an opaque still GIF's family")
        #expect(try first.image().pageCount == 1)
        let etag = try #require(first.header("etag"))
        let hit = try await h.get(h.thumb("/many.gif", "w=4"))
        #expect(hit.header("x-cache") == "hit" && hit.header("x-thumbd-first-frame") == "max-frames")
        let notModified = try await h.get(h.thumb("/many.gif", "w=4"), [("If-None-Match", etag)])
        #expect(notModified.status == 304 && notModified.header("x-thumbd-first-frame") == "max-frames")
    }
}
