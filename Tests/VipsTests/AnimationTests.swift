import TestSupport
import Testing
import Vips

/// `VipsEncoding.keepsAnimation`: an animated GIF or WebP into GIF or WebP keeps every frame, each
/// cut to the same size, with its delays and loop count; anything else gives the first frame, as
/// without it.
@Suite("Vips animated thumbnails")
struct AnimationTests {
    /// Different per frame, in milliseconds; multiples of 10 (GIF stores centiseconds).
    static let delays = [100, 200, 50, 300]

    /// Four 80 × 60 frames (red, green, blue, yellow) with `delays`.
    static func source(
        _ format: Fixtures.AnimationFormat, width: Int = 80, height: Int = 60, loop: Int = 0, transparent: Bool = false
    ) -> [UInt8] {
        switch format {
        case .gif:
            Fixtures.animatedGIF(
                width: width, height: height, frames: delays.count, delays: delays, loop: loop,
                transparent: transparent)
        case .webp:
            Fixtures.animatedWebP(
                width: width, height: height, frames: delays.count, delays: delays, loop: loop,
                transparent: transparent)
        }
    }

    /// An animated thumbnail, decoded (every frame), its reported size checked against the file's.
    static func animated(
        _ bytes: [UInt8], _ cut: VipsCut, format: VipsOutputFormat, opaqueFormat: VipsOutputFormat? = nil
    ) throws -> (VipsThumbnail, DecodedImage) {
        let result = try thumbnail(bytes, cut, format: format, opaqueFormat: opaqueFormat, keepsAnimation: true)
        let decoded = try Fixtures.decode(result.buffer.bytes, allPages: true)
        #expect(decoded.loader == loaderName(of: result.format))
        #expect(decoded.pageCount == result.frames)
        // Required: the callers read pixels frame by frame.
        try #require(decoded.width == result.width && decoded.pageHeight == result.height)
        try #require(decoded.frames == result.frames)
        return (result, decoded)
    }

    @Test(arguments: Fixtures.AnimationFormat.allCases)
    func headersCarryTheDelaysAndLoop(source format: Fixtures.AnimationFormat) throws {
        for loop in [0, 3] {
            let header = try header(Self.source(format, loop: loop))
            #expect(header.pageCount == 4)
            #expect(header.width == 80 && header.height == 60)
            #expect(header.delays == Self.delays)
            #expect(header.loop == loop)
        }
        let still = try header(Fixtures.jpeg(width: 8, height: 8))
        #expect(still.delays.isEmpty && still.loop == nil)
    }

    @Test(arguments: Fixtures.AnimationFormat.allCases, [VipsOutputFormat.gif, .webp])
    func framesDelaysAndLoopAreKept(source format: Fixtures.AnimationFormat, output: VipsOutputFormat) throws {
        for loop in [0, 3] {
            let (result, decoded) = try Self.animated(
                Self.source(format, loop: loop), .exact(width: 40, height: 30), format: output)
            #expect(result.format == output)
            #expect(result.frames == 4)
            #expect(result.width == 40 && result.height == 30)
            #expect(decoded.delays == Self.delays)
            #expect(decoded.loop == loop)
            #expect(!decoded.hasEXIF && !decoded.hasICCProfile)
            for frame in 0..<4 {
                let pixel = decoded.pixel(20, 15, frame: frame)
                let expected = Fixtures.animationColours[frame]
                #expect(isClose(pixel, expected, tolerance: tolerance(of: output)), "frame \(frame): \(pixel)")
            }
        }
    }

    /// A frame identical to the one before it: libwebp's animation encoder may merge the two
    /// (adding their delays; its lossless mode does, as the source here shows), so `frames` counts
    /// what was written (`animated` checks it against the decoder); the timing stays the same.
    @Test(arguments: [VipsOutputFormat.gif, .webp])
    func identicalFramesAreCountedAsWritten(output: VipsOutputFormat) throws {
        let frame = { (colour: [UInt8]) in Array([[UInt8]](repeating: colour, count: 40 * 30).joined()) }
        let pixels = frame([255, 0, 0]) + frame([255, 0, 0]) + frame([0, 0, 255])
        let merged = try header(
            Fixtures.animation(.webp, pixels: pixels, width: 40, height: 30, bands: 3, delays: [100, 100, 300]))
        #expect(merged.pageCount == 2 && merged.delays == [200, 300])
        let source = Fixtures.animation(.gif, pixels: pixels, width: 40, height: 30, bands: 3, delays: [100, 100, 300])
        #expect(try header(source).pageCount == 3)
        let (result, decoded) = try Self.animated(source, .exact(width: 20, height: 15), format: output)
        #expect((2...3).contains(result.frames))
        #expect(decoded.delays.reduce(0, +) == 500)
    }

    /// Every frame comes out the cut's size (exact, stretched, clamped, cover), showing its own
    /// frame's colour.
    @Test(arguments: Fixtures.AnimationFormat.allCases, [VipsOutputFormat.gif, .webp])
    func everyFrameIsCutToTheSameSize(source format: Fixtures.AnimationFormat, output: VipsOutputFormat) throws {
        let source = Self.source(format)
        let cuts: [(VipsCut, width: Int, height: Int)] = [
            (.exact(width: 40, height: 30), 40, 30),
            (.exact(width: 50, height: 17), 50, 17),  // stretched, an odd frame height
            (.exact(width: 80, height: 60), 80, 60),  // no resize
            (.exact(width: 200, height: 100), 80, 60),  // clamped, never upscaled
            (.cover(width: 30, height: 30, crop: .centre), 30, 30),
            (.cover(width: 70, height: 21, crop: .centre), 70, 21),
            (.cover(width: 25, height: 41, crop: .attention), 25, 41),
        ]
        for (cut, width, height) in cuts {
            let (result, decoded) = try Self.animated(source, cut, format: output)
            #expect(result.frames == 4, "\(cut)")
            #expect(result.width == width && result.height == height, "\(cut): \(result.width)x\(result.height)")
            #expect(decoded.height == height * 4)
            for frame in 0..<4 {
                let pixel = decoded.pixel(width / 2, height / 2, frame: frame)
                let expected = Fixtures.animationColours[frame]
                #expect(isClose(pixel, expected, tolerance: tolerance(of: output)), "\(cut) frame \(frame): \(pixel)")
            }
        }
    }

    /// Three 160 × 60 frames. The first: grey, with a red and white checkerboard in its right
    /// 30 columns (edges and saturation, what attention looks for). The others: blue in the left
    /// 100 columns, green in the right 60 (a little darker in the third: libwebp merges identical
    /// frames).
    static func halves(_ format: Fixtures.AnimationFormat) -> [UInt8] {
        let (width, height) = (160, 60)
        var pixels: [UInt8] = []
        for frame in 0..<3 {
            for y in 0..<height {
                for x in 0..<width {
                    if frame == 0 {
                        pixels +=
                            x < 130 ? [128, 128, 128] : (x / 4 + y / 4) % 2 == 0 ? [255, 0, 0] : [255, 255, 255]
                    } else {
                        let level: UInt8 = frame == 1 ? 255 : 225
                        pixels += x < 100 ? [0, 0, level] : [0, level, 0]
                    }
                }
            }
        }
        return Fixtures.animation(
            format, pixels: pixels, width: width, height: height, bands: 3, delays: [100, 100, 100])
    }

    /// A cover crops every frame to one window: the centre, or the window attention picks on the
    /// first frame (here the right end, where the checkerboard is). Frames 2 and 3 then show green
    /// only, which no frame-by-frame attention (their own right end is flat) and no centre would.
    /// The first frame is cut exactly as a still of it is.
    @Test(arguments: Fixtures.AnimationFormat.allCases, [VipsOutputFormat.gif, .webp])
    func aCoverCutsEveryFrameToOneWindow(source format: Fixtures.AnimationFormat, output: VipsOutputFormat) throws {
        let source = Self.halves(format)
        let green: [UInt8] = [0, 255, 0]
        let blue: [UInt8] = [0, 0, 255]
        let tolerance = tolerance(of: output)

        // 160 × 60 → 107 × 40, cut 40 wide: the centre is columns 33-72, across the blue-green edge
        // of frames 2 and 3 (at 67).
        let (_, centre) = try Self.animated(source, .cover(width: 40, height: 40, crop: .centre), format: output)
        for frame in 1..<3 {
            for (x, colour) in [(4, blue), (38, green)] {
                let pixel = centre.pixel(x, 20, frame: frame)
                #expect(isClose(pixel, colour, tolerance: tolerance), "centre frame \(frame) x \(x): \(pixel)")
            }
        }

        let cut = VipsCut.cover(width: 40, height: 40, crop: .attention)
        let (result, attention) = try Self.animated(source, cut, format: output)
        #expect(result.frames == 3 && result.width == 40 && result.height == 40)
        for frame in 1..<3 {
            for x in [4, 36] {
                let pixel = attention.pixel(x, 20, frame: frame)
                #expect(isClose(pixel, green, tolerance: tolerance), "attention frame \(frame) x \(x): \(pixel)")
            }
        }
        // The first frame against the still of it (the first frame alone, same encoder), colour
        // bands only: the same window, so nearly the same samples (GIF: under 1; libwebp's
        // animation encoder codes a frame a little differently from a still: up to about 6).
        let still = try Fixtures.decode(thumbnail(source, cut, format: output).buffer.bytes)
        #expect(still.width == 40 && still.height == 40)
        var total = 0
        for y in 0..<40 {
            for x in 0..<40 {
                for band in 0..<3 {
                    let animated = Int(attention.samples[(y * 40 + x) * attention.bands + band])
                    total += abs(animated - Int(still.samples[(y * 40 + x) * still.bands + band]))
                }
            }
        }
        let difference = Double(total) / Double(40 * 40 * 3)
        #expect(difference < (output == .gif ? 2 : 8), "mean difference \(difference)")
    }

    /// A transparent region stays transparent in every frame, in both outputs.
    @Test(arguments: Fixtures.AnimationFormat.allCases, [VipsOutputFormat.gif, .webp])
    func transparencyIsKept(source format: Fixtures.AnimationFormat, output: VipsOutputFormat) throws {
        // 80 × 80, the top 20 rows clear → 40 × 40, the top 10 rows clear.
        let source = Self.source(format, width: 80, height: 80, transparent: true)
        for cut in [VipsCut.exact(width: 40, height: 40), .cover(width: 40, height: 30, crop: .centre)] {
            let (result, decoded) = try Self.animated(source, cut, format: output)
            #expect(result.frames == 4)
            #expect(decoded.bands == 4)
            for frame in 0..<4 {
                let clear = decoded.pixel(20, 2, frame: frame)
                #expect(clear[3] <= 8, "\(cut) frame \(frame) top: \(clear)")
                let solid = decoded.pixel(20, result.height - 5, frame: frame)
                let expected = Fixtures.animationColours[frame] + [255]
                #expect(isClose(solid, expected, tolerance: tolerance(of: output)), "\(cut) frame \(frame): \(solid)")
            }
        }
    }

    /// An animated WebP's embedded profile is applied to every frame, and its metadata (ICC, EXIF
    /// with an orientation, XMP) is not kept; the orientation is not applied (browsers do not
    /// rotate animations).
    @Test(arguments: [VipsOutputFormat.gif, .webp])
    func colourIsHandledAsForStills(output: VipsOutputFormat) throws {
        let source = Fixtures.animatedWebPWithMetadata(width: 60, height: 40, frames: 3)
        let original = try Fixtures.decode(source)
        #expect(original.hasICCProfile && original.orientation == 6)
        let (result, decoded) = try Self.animated(source, .exact(width: 30, height: 20), format: output)
        #expect(result.frames == 3 && result.width == 30 && result.height == 20)
        #expect(!decoded.hasICCProfile && !decoded.hasEXIF && decoded.orientation == nil)
        #expect(decoded.delays == [100, 100, 100] && decoded.loop == 2)
        for frame in 0..<3 {
            let pixel = decoded.pixel(15, 15, frame: frame)
            #expect(isClose(pixel, Fixtures.perceptualOnlyMeant + [255], tolerance: 16), "frame \(frame): \(pixel)")
            #expect(decoded.pixel(15, 1, frame: frame)[3] <= 8)
        }
    }

    /// `opaqueFormat` replaces the format of an opaque animation only with one that animates too.
    @Test func anOpaqueFormatThatCannotAnimateIsNotUsed() throws {
        let opaque = Self.source(.gif)  // loads with an alpha band it does not use
        let kept = try thumbnail(
            opaque, .exact(width: 40, height: 30), format: .webp, opaqueFormat: .jpeg, keepsAnimation: true)
        #expect(kept.format == .webp && kept.frames == 4)
        let swapped = try thumbnail(
            opaque, .exact(width: 40, height: 30), format: .webp, opaqueFormat: .gif, keepsAnimation: true)
        #expect(swapped.format == .gif && swapped.frames == 4)
        let clear = try thumbnail(
            Self.source(.gif, transparent: true), .exact(width: 40, height: 30), format: .webp, opaqueFormat: .gif,
            keepsAnimation: true)
        #expect(clear.format == .webp && clear.frames == 4)
    }

    @Test(arguments: [VipsOutputFormat.jpeg, .png, .avif], Fixtures.AnimationFormat.allCases)
    func aStillFormatGetsTheFirstFrame(format: VipsOutputFormat, source: Fixtures.AnimationFormat) throws {
        let result = try thumbnail(
            Self.source(source), .exact(width: 40, height: 30), format: format, keepsAnimation: true)
        #expect(result.frames == 1)
        let decoded = try Fixtures.decode(result.buffer.bytes, allPages: true)
        #expect(decoded.frames == 1 && decoded.pageCount == 1)
        #expect(decoded.width == 40 && decoded.height == 30)
        let pixel = decoded.pixel(20, 15)
        #expect(isClose(pixel, Fixtures.animationColours[0], tolerance: tolerance(of: format)), "\(pixel)")
    }

    /// A still source, a one-frame animation and a decoded copy come out exactly as without
    /// `keepsAnimation`.
    @Test(arguments: [VipsOutputFormat.gif, .webp])
    func stillsAndCopiesAreUnchanged(format: VipsOutputFormat) throws {
        let sources = [
            Fixtures.jpeg(width: 64, height: 48, orientation: 6), Fixtures.png(width: 64, height: 48, alpha: true),
            Fixtures.animatedGIF(width: 64, height: 48, frames: 1),
            Fixtures.animatedWebP(width: 64, height: 48, frames: 1),
        ]
        let cut = VipsCut.cover(width: 32, height: 32, crop: .attention)
        for source in sources {
            let kept = try thumbnail(source, cut, format: format, keepsAnimation: true)
            let plain = try thumbnail(source, cut, format: format)
            #expect(kept.buffer.bytes == plain.buffer.bytes)
            #expect(kept.frames == 1 && kept.width == 32 && kept.height == 32)
        }
        for input in [Input.copy, .reducedCopy] {
            let copy = try thumbnail(
                Self.source(.gif), .exact(width: 40, height: 30), format: format, keepsAnimation: true, from: input)
            #expect(copy.frames == 1)
            #expect(try Fixtures.decode(copy.buffer.bytes, allPages: true).frames == 1)
        }
    }

    /// GIF output of a still: the quadrants, the transparent half kept.
    @Test(arguments: Input.allCases)
    func gifOutputOfAStill(input: Input) throws {
        let source = Fixtures.png(width: 64, height: 64, alpha: true)
        let (result, decoded) = try thumbnailDecoded(source, .exact(width: 32, height: 32), format: .gif, from: input)
        #expect(result.format == .gif && result.frames == 1)
        #expect(decoded.loader == "gifload_buffer" && decoded.pageCount == 1)
        #expect(isClose(decoded.pixel(8, 8), Fixtures.quadrantColours[0] + [255], tolerance: 4))
        #expect(isClose(decoded.pixel(24, 8), Fixtures.quadrantColours[1] + [255], tolerance: 4))
        #expect(decoded.pixel(8, 24)[3] == 0)
    }

    /// 120 frames of 400 × 400: decoding and resizing them all is the job the limit must reach.
    /// GIF and WebP decode from memory (no reads to fail): the copy's progress signal stops them,
    /// a GIF within a frame (measured: a limit at 10 %, 30 %, 60 % and 90 % of a 100-frame
    /// thumbnail stopped it within 35 ms of the limit, the last in the GIF encoder); 8.14's WebP
    /// loader decodes every frame into its own copy before the first signal, so a WebP stops only
    /// after that (here the limit has passed before the copy starts).
    static let longGIF = Fixtures.longAnimation(.gif, width: 400, height: 400, frames: 120)
    static let longWebP = Fixtures.longAnimation(.webp, width: 400, height: 400, frames: 120)

    @Test(arguments: [VipsOutputFormat.gif, .webp])
    func aLongAnimationStopsAtItsTimeLimit(output: VipsOutputFormat) throws {
        for source in [Self.longGIF, Self.longWebP] {
            #expect(source.count < 100_000)
            for cut in [VipsCut.exact(width: 200, height: 200), .cover(width: 100, height: 50, crop: .attention)] {
                #expect(throws: VipsError.timedOut) {
                    try thumbnail(source, cut, format: output, keepsAnimation: true, timeLimit: .milliseconds(1))
                }
            }
        }
        // The same with time enough: all 120 frames.
        let done = try thumbnail(
            Self.longGIF, .exact(width: 50, height: 50), format: output, keepsAnimation: true,
            timeLimit: .seconds(600))
        #expect(done.frames == 120)
    }
}
