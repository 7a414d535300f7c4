import TestSupport
import Testing
import Vips

@Suite("Vips.thumbnail geometry")
struct ThumbnailGeometryTests {
    static let formats: [VipsOutputFormat] = [.jpeg, .png, .webp, .avif]
    /// 400 × 300, 4:3.
    static let source = Fixtures.jpeg(width: 400, height: 300)

    @Test(arguments: formats)
    func insideWidthOnlyKeepsAspect(format: VipsOutputFormat) throws {
        let (result, decoded) = try thumbnailDecoded(Self.source, .init(width: 100, format: format))
        #expect(result.width == 100 && result.height == 75)
        #expect(decoded.loader == loaderName(of: format))
        #expect(decoded.bands == 3)
        #expect(decoded.pageCount == 1)
    }

    @Test(arguments: formats)
    func insideBoxFitsTheTighterSide(format: VipsOutputFormat) throws {
        let (result, _) = try thumbnailDecoded(Self.source, .init(width: 100, height: 50, format: format))
        #expect(result.height == 50)
        #expect(abs(result.width - 67) <= 1)
    }

    @Test(arguments: formats)
    func coverFillsTheBoxAndCrops(format: VipsOutputFormat) throws {
        let (result, decoded) = try thumbnailDecoded(
            Self.source, .init(width: 100, height: 100, fit: .cover, format: format))
        #expect(result.width == 100 && result.height == 100)
        // Centre crop of the 4:3 quadrant pattern: the top half is still red | green.
        #expect(isClose(decoded.pixel(20, 20), Fixtures.quadrantColours[0], tolerance: tolerance(of: format)))
        #expect(isClose(decoded.pixel(80, 20), Fixtures.quadrantColours[1], tolerance: tolerance(of: format)))
        #expect(isClose(decoded.pixel(20, 80), Fixtures.quadrantColours[2], tolerance: tolerance(of: format)))
    }

    @Test(arguments: formats)
    func fillStretchesToTheBox(format: VipsOutputFormat) throws {
        let (result, decoded) = try thumbnailDecoded(
            Self.source, .init(width: 100, height: 20, fit: .fill, format: format))
        #expect(result.width == 100 && result.height == 20)
        // All four quadrants survive a stretch (a crop would lose some).
        #expect(isClose(decoded.pixel(10, 3), Fixtures.quadrantColours[0], tolerance: tolerance(of: format)))
        #expect(isClose(decoded.pixel(90, 16), Fixtures.quadrantColours[3], tolerance: tolerance(of: format)))
    }

    @Test func coverAndFillWithoutHeightUseASquare() throws {
        let cover = try thumbnail(Self.source, .init(width: 60, fit: .cover))
        #expect(cover.width == 60 && cover.height == 60)
        let fill = try thumbnail(Self.source, .init(width: 60, fit: .fill))
        #expect(fill.width == 60 && fill.height == 60)
    }

    @Test func coverWithAttentionKeepsTheBox() throws {
        let result = try thumbnail(Self.source, .init(width: 80, height: 120, fit: .cover, crop: .attention))
        #expect(result.width == 80 && result.height == 120)
    }

    @Test func coverCropsTheLongSide() throws {
        // 400 × 200 → 100 × 100 centre: the middle of the image, so red | green on top.
        let wide = Fixtures.png(width: 400, height: 200)
        let (_, decoded) = try thumbnailDecoded(wide, .init(width: 100, height: 100, fit: .cover, format: .png))
        #expect(decoded.width == 100 && decoded.height == 100)
        #expect(isClose(decoded.pixel(10, 10), Fixtures.quadrantColours[0], tolerance: 4))
        #expect(isClose(decoded.pixel(90, 10), Fixtures.quadrantColours[1], tolerance: 4))
    }

    @Test(arguments: [VipsFit.inside, .cover, .fill])
    func neverUpscales(fit: VipsFit) throws {
        let small = Fixtures.jpeg(width: 40, height: 30)
        let result = try thumbnail(small, .init(width: 1000, height: 800, fit: fit))
        #expect(result.width == 40 && result.height == 30)
        let widthOnly = try thumbnail(small, .init(width: 1000, fit: fit))
        #expect(widthOnly.width <= 40 && widthOnly.height <= 30)
    }

    @Test func fillClampsEachSideToTheSource() throws {
        let small = Fixtures.jpeg(width: 40, height: 30)
        let result = try thumbnail(small, .init(width: 1000, height: 20, fit: .fill))
        #expect(result.width == 40 && result.height == 20)
    }

    @Test func widthOnlyIsNotABoxOfWidthSquared() throws {
        // libvips' default height equals the width; a tall image must still come out at full width.
        let tall = Fixtures.jpeg(width: 100, height: 400)
        let result = try thumbnail(tall, .init(width: 50))
        #expect(result.width == 50 && result.height == 200)
    }

    @Test func exifOrientationIsAppliedAndRemoved() throws {
        // Stored 80 × 40 with orientation 6 (display = stored rotated 90° clockwise): 40 × 80.
        let rotated = Fixtures.jpeg(width: 80, height: 40, orientation: 6)
        let (result, decoded) = try thumbnailDecoded(rotated, .init(width: 1000, format: .png))
        #expect(result.width == 40 && result.height == 80)
        #expect(decoded.orientation == nil)
        #expect(!decoded.hasEXIF)
        let q = Fixtures.quadrantColours
        #expect(isClose(decoded.pixel(8, 8), q[2], tolerance: 12))  // stored bottom-left, blue
        #expect(isClose(decoded.pixel(32, 8), q[0], tolerance: 12))  // stored top-left, red
        #expect(isClose(decoded.pixel(8, 72), q[3], tolerance: 12))  // stored bottom-right, yellow
        #expect(isClose(decoded.pixel(32, 72), q[1], tolerance: 12))  // stored top-right, green
    }

    @Test(arguments: [VipsFit.inside, .cover, .fill])
    func orientedSourceLimitsTheOutput(fit: VipsFit) throws {
        // Oriented source is 40 × 80: never wider than 40 or taller than 80.
        let rotated = Fixtures.jpeg(width: 80, height: 40, orientation: 6)
        let result = try thumbnail(rotated, .init(width: 70, height: 70, fit: fit))
        #expect(result.width <= 40 && result.height <= 80)
        if fit == .fill { #expect(result.width == 40 && result.height == 70) }
        if fit == .cover { #expect(result.width == 40 && result.height == 70) }
    }

    @Test func invalidArguments() {
        let jpeg = Fixtures.jpeg(width: 16, height: 16)
        #expect(throws: VipsError.self) { try thumbnail(jpeg, .init(width: 0)) }
        #expect(throws: VipsError.self) { try thumbnail(jpeg, .init(width: 10, height: -1)) }
        #expect(throws: VipsError.self) { try thumbnail(jpeg, .init(width: 10, quality: 101)) }
        let error = #expect(throws: VipsError.self) { try thumbnail(jpeg, .init(width: 0)) }
        guard case .invalidArgument = error else {
            Issue.record("expected invalidArgument, got \(String(describing: error))")
            return
        }
    }
}
