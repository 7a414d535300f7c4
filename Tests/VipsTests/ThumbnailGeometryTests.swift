import TestSupport
import Testing
import Vips

/// The exact output size of every cut, from the original bytes and from decoded copies alike.
@Suite("Vips.thumbnail geometry")
struct ThumbnailGeometryTests {
    static let formats: [VipsOutputFormat] = [.jpeg, .png, .webp, .avif]
    /// 400 × 300, 4:3.
    static let source = Fixtures.jpeg(width: 400, height: 300)

    @Test(arguments: formats, Input.allCases)
    func exactSizeComesOutExactly(format: VipsOutputFormat, input: Input) throws {
        let (result, decoded) = try thumbnailDecoded(
            Self.source, .exact(width: 100, height: 75), format: format, from: input)
        #expect(result.width == 100 && result.height == 75)
        #expect(result.format == format)
        #expect(decoded.loader == loaderName(of: format))
        #expect(decoded.bands == 3)
        #expect(decoded.pageCount == 1)
        #expect(isClose(decoded.pixel(20, 15), Fixtures.quadrantColours[0], tolerance: tolerance(of: format)))
        #expect(isClose(decoded.pixel(80, 60), Fixtures.quadrantColours[3], tolerance: tolerance(of: format)))
    }

    @Test(arguments: formats, Input.allCases)
    func coverFillsTheBoxAndCropsTheCentre(format: VipsOutputFormat, input: Input) throws {
        let (result, decoded) = try thumbnailDecoded(
            Self.source, .cover(width: 100, height: 100, crop: .centre), format: format, from: input)
        #expect(result.width == 100 && result.height == 100)
        // Centre crop of the 4:3 quadrant pattern: still red | green over blue | yellow.
        #expect(isClose(decoded.pixel(20, 20), Fixtures.quadrantColours[0], tolerance: tolerance(of: format)))
        #expect(isClose(decoded.pixel(80, 20), Fixtures.quadrantColours[1], tolerance: tolerance(of: format)))
        #expect(isClose(decoded.pixel(20, 80), Fixtures.quadrantColours[2], tolerance: tolerance(of: format)))
    }

    @Test(arguments: Input.allCases)
    func exactStretchesWhenTheAspectDiffers(input: Input) throws {
        let (result, decoded) = try thumbnailDecoded(
            Self.source, .exact(width: 100, height: 20), format: .png, from: input)
        #expect(result.width == 100 && result.height == 20)
        // All four quadrants survive a stretch (a crop would lose some).
        #expect(isClose(decoded.pixel(10, 3), Fixtures.quadrantColours[0], tolerance: 6))
        #expect(isClose(decoded.pixel(90, 16), Fixtures.quadrantColours[3], tolerance: 6))
    }

    @Test(arguments: Input.allCases)
    func coverWithAttentionKeepsTheBox(input: Input) throws {
        let result = try thumbnail(Self.source, .cover(width: 80, height: 120, crop: .attention), from: input)
        #expect(result.width == 80 && result.height == 120)
    }

    @Test(arguments: Input.allCases)
    func coverCropsTheLongSide(input: Input) throws {
        // 400 × 200 → 100 × 100 centre: the middle of the image, so red | green on top.
        let wide = Fixtures.png(width: 400, height: 200)
        let (_, decoded) = try thumbnailDecoded(
            wide, .cover(width: 100, height: 100, crop: .centre), format: .png, from: input)
        #expect(decoded.width == 100 && decoded.height == 100)
        #expect(isClose(decoded.pixel(10, 10), Fixtures.quadrantColours[0], tolerance: 4))
        #expect(isClose(decoded.pixel(90, 10), Fixtures.quadrantColours[1], tolerance: 4))
    }

    @Test(arguments: Input.allCases)
    func neverUpscales(input: Input) throws {
        let small = Fixtures.jpeg(width: 40, height: 30)
        let exact = try thumbnail(small, .exact(width: 1000, height: 800), from: input)
        #expect(exact.width == 40 && exact.height == 30)
        // A cover keeps the box's 5:4 shape: the largest such box 40 × 30 fills.
        let cover = try thumbnail(small, .cover(width: 1000, height: 800, crop: .centre), from: input)
        #expect(cover.width == 38 && cover.height == 30)
        let oneSide = try thumbnail(small, .exact(width: 1000, height: 20), from: input)
        #expect(oneSide.width == 40 && oneSide.height == 20)
    }

    @Test(arguments: Input.allCases)
    func exifOrientationIsAppliedAndRemoved(input: Input) throws {
        // Stored 80 × 40 with orientation 6 (display = stored rotated 90° clockwise): 40 × 80.
        let rotated = Fixtures.jpeg(width: 80, height: 40, orientation: 6)
        let (result, decoded) = try thumbnailDecoded(rotated, .exact(width: 40, height: 80), format: .png, from: input)
        #expect(result.width == 40 && result.height == 80)
        #expect(decoded.orientation == nil)
        #expect(!decoded.hasEXIF)
        let q = Fixtures.quadrantColours
        #expect(isClose(decoded.pixel(8, 8), q[2], tolerance: 12))  // stored bottom-left, blue
        #expect(isClose(decoded.pixel(32, 8), q[0], tolerance: 12))  // stored top-left, red
        #expect(isClose(decoded.pixel(8, 72), q[3], tolerance: 12))  // stored bottom-right, yellow
        #expect(isClose(decoded.pixel(32, 72), q[1], tolerance: 12))  // stored top-right, green
    }

    @Test(arguments: Input.allCases)
    func orientedSourceLimitsTheOutput(input: Input) throws {
        // The oriented source is 40 × 80: never wider than 40 or taller than 80.
        let rotated = Fixtures.jpeg(width: 80, height: 40, orientation: 6)
        let exact = try thumbnail(rotated, .exact(width: 70, height: 70), from: input)
        #expect(exact.width == 40 && exact.height == 70)
        let cover = try thumbnail(rotated, .cover(width: 70, height: 70, crop: .centre), from: input)
        #expect(cover.width == 40 && cover.height == 40)
    }

    /// A cover larger than the input in one direction or both is the largest box of its aspect
    /// ratio the input fills (it was each side clamped alone: 290 × 300 for this first one).
    @Test(arguments: Input.allCases)
    func coverOfASmallerInputKeepsTheBoxShape(input: Input) throws {
        for (width, height, box, expected) in [
            (290, 442, (300, 300), (290, 290)), (442, 290, (300, 300), (290, 290)), (100, 50, (300, 300), (50, 50)),
            (300, 1000, (400, 200), (300, 150)),
        ] {
            let source = Fixtures.jpeg(width: width, height: height)
            let result = try thumbnail(source, .cover(width: box.0, height: box.1, crop: .centre), from: input)
            #expect((result.width, result.height) == expected, "\(width)x\(height) in \(box)")
        }
        // Stored 442 × 290, orientation 6: shown 290 × 442.
        let rotated = Fixtures.jpeg(width: 442, height: 290, orientation: 6)
        let result = try thumbnail(rotated, .cover(width: 300, height: 300, crop: .attention), from: input)
        #expect((result.width, result.height) == (290, 290))
    }

    @Test func aReducedCopyServesTheSameSizeAsTheOriginal() throws {
        let photo = Fixtures.detailedJPEG(width: 2400, height: 1600)
        let copy = try decode(photo, width: 1024, height: 1024)
        #expect(copy.width == 1024 && copy.height == 683)
        for cut in [VipsCut.exact(width: 300, height: 200), .cover(width: 180, height: 180, crop: .centre)] {
            let fromOriginal = try Fixtures.decode(thumbnail(photo, cut, format: .png).buffer.bytes)
            let fromCopy = try Fixtures.decode(thumbnail(photo, cut, format: .png, from: .reducedCopy).buffer.bytes)
            #expect((fromCopy.width, fromCopy.height) == (fromOriginal.width, fromOriginal.height))
            guard fromCopy.width == fromOriginal.width, fromCopy.height == fromOriginal.height else { continue }
            #expect(Fixtures.meanAbsoluteDifference(fromCopy, fromOriginal) < 3.0)
        }
    }

    @Test func invalidArguments() {
        let jpeg = Fixtures.jpeg(width: 16, height: 16)
        for (cut, quality) in [
            (VipsCut.exact(width: 0, height: 10), 80), (.exact(width: 10, height: -1), 80),
            (.cover(width: 10, height: 10, crop: .centre), 101), (.exact(width: 10, height: 10), 0),
        ] {
            let error = #expect(throws: VipsError.self) { try thumbnail(jpeg, cut, quality: quality) }
            guard case .invalidArgument = error else {
                Issue.record("expected invalidArgument for \(cut) q=\(quality), got \(String(describing: error))")
                continue
            }
        }
        #expect(throws: VipsError.invalidArgument("box 0x10")) { try decode(jpeg, width: 0, height: 10) }
    }
}
