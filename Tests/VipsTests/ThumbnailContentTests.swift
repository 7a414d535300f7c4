import TestSupport
import Testing
import Vips

@Suite("Vips.thumbnail colour, frames, alpha, metadata, errors")
struct ThumbnailContentTests {
    @Test(arguments: [VipsOutputFormat.jpeg, .png])
    func cmykBecomesSRGB(format: VipsOutputFormat) throws {
        let cmyk = Fixtures.cmykJPEG(width: 64, height: 64)
        #expect(try Fixtures.decode(cmyk).interpretation == "cmyk")
        let (_, decoded) = try thumbnailDecoded(cmyk, .init(width: 32, format: format))
        #expect(decoded.bands == 3)
        #expect(decoded.interpretation == "srgb")
        #expect(!decoded.hasICCProfile)
        // The built-in CMYK profile maps this ink to about (238, 60, 58): a clear red.
        let pixel = decoded.pixel(16, 16)
        #expect(isClose(pixel, [238, 60, 58], tolerance: 20), "got \(pixel)")
    }

    @Test(arguments: [VipsOutputFormat.png, .jpeg, .webp])
    func embeddedProfileIsHonouredThenStripped(format: VipsOutputFormat) throws {
        let p3 = Fixtures.jpegWithICC(width: 64, height: 64)
        let source = try Fixtures.decode(p3)
        #expect(source.hasICCProfile)
        // The stored numbers are P3 values, visibly different from the sRGB colour they mean.
        #expect(!isClose(source.pixel(32, 32), Fixtures.iccSourceColour, tolerance: 10))

        let (_, decoded) = try thumbnailDecoded(p3, .init(width: 32, format: format))
        #expect(!decoded.hasICCProfile)
        #expect(!decoded.hasEXIF)
        let pixel = decoded.pixel(16, 16)
        #expect(isClose(pixel, Fixtures.iccSourceColour, tolerance: format == .png ? 6 : 12), "got \(pixel)")
    }

    @Test(arguments: [VipsOutputFormat.jpeg, .png, .webp, .avif])
    func allMetadataIsStripped(format: VipsOutputFormat) throws {
        let source = Fixtures.jpeg(width: 64, height: 48, orientation: 1)
        #expect(try Fixtures.decode(source).hasEXIF)
        let (_, decoded) = try thumbnailDecoded(source, .init(width: 32, format: format))
        #expect(!decoded.hasEXIF)
        #expect(!decoded.hasICCProfile)
        #expect(decoded.orientation == nil)
    }

    @Test(arguments: [VipsOutputFormat.jpeg, .png, .webp, .avif])
    func animatedGIFGivesTheFirstFrameOnly(format: VipsOutputFormat) throws {
        let gif = Fixtures.gif(width: 40, height: 30, frames: 3)
        let (result, decoded) = try thumbnailDecoded(gif, .init(width: 20, format: format))
        #expect(result.width == 20 && result.height == 15)
        #expect(decoded.pageCount == 1)
        #expect(
            isClose(decoded.pixel(10, 7), Fixtures.gifFrameColours[0], tolerance: tolerance(of: format)),
            "got \(decoded.pixel(10, 7))")
    }

    @Test(arguments: [VipsOutputFormat.png, .webp, .avif])
    func alphaIsKept(format: VipsOutputFormat) throws {
        let png = Fixtures.png(width: 64, height: 64, alpha: true)
        let (_, decoded) = try thumbnailDecoded(png, .init(width: 32, format: format))
        #expect(decoded.bands == 4)
        #expect(decoded.pixel(16, 4)[3] > 250)  // top half opaque
        #expect(decoded.pixel(16, 28)[3] < 5)  // bottom half transparent
    }

    @Test func jpegFlattensAlphaOntoWhite() throws {
        let png = Fixtures.png(width: 64, height: 64, alpha: true)
        let (_, decoded) = try thumbnailDecoded(png, .init(width: 32, format: .jpeg))
        #expect(decoded.bands == 3)
        #expect(isClose(decoded.pixel(4, 4), Fixtures.quadrantColours[0], tolerance: 20))
        #expect(isClose(decoded.pixel(16, 28), [255, 255, 255], tolerance: 6))
    }

    @Test(arguments: [VipsOutputFormat.jpeg, .webp])
    func truncatedJPEGFailsToDecode(format: VipsOutputFormat) throws {
        // libvips would otherwise fill the missing rows with grey; `fail_on=error` makes it fail.
        let jpeg = Fixtures.jpeg(width: 400, height: 300)
        let truncated = Array(jpeg.prefix(jpeg.count / 2))
        let error = #expect(throws: VipsError.self) { try thumbnail(truncated, .init(width: 100, format: format)) }
        guard case .decodeFailed = error else {
            Issue.record("expected decodeFailed, got \(String(describing: error))")
            return
        }
    }

    @Test func pngBombFailsFastInsteadOfDecodingForever() throws {
        let clock = ContinuousClock()
        let elapsed = clock.measure {
            #expect(throws: VipsError.self) { try thumbnail(Fixtures.pngBomb(), .init(width: 100)) }
        }
        #expect(elapsed < .seconds(20))  // a 2.5-gigapixel decode would take minutes: refused, not decoded
    }

    @Test func unknownAndBlockedInputs() {
        #expect(throws: VipsError.unknownFormat) { try thumbnail(Array(repeating: 7, count: 100), .init(width: 10)) }
        #expect(throws: VipsError.blockedLoader("svgload_buffer")) { try thumbnail(Fixtures.svg(), .init(width: 10)) }
    }

    @Test(arguments: [VipsOutputFormat.jpeg, .png, .webp, .avif])
    func otherSourceFormats(format: VipsOutputFormat) throws {
        for source in [
            Fixtures.webp(width: 80, height: 60), Fixtures.avif(width: 80, height: 60),
            Fixtures.tiff(width: 80, height: 60),
        ] {
            let (result, decoded) = try thumbnailDecoded(source, .init(width: 40, format: format))
            #expect(result.width == 40 && result.height == 30)
            #expect(isClose(decoded.pixel(30, 22), Fixtures.quadrantColours[3], tolerance: tolerance(of: format)))
        }
    }

    @Test func meanAbsoluteDifferenceOfSimilarThumbnailsIsSmall() throws {
        let source = Fixtures.png(width: 200, height: 100)
        let png = try Fixtures.decode(thumbnail(source, .init(width: 100, format: .png)).buffer.bytes)
        let jpeg = try Fixtures.decode(thumbnail(source, .init(width: 100, format: .jpeg, quality: 90)).buffer.bytes)
        #expect(Fixtures.meanAbsoluteDifference(png, png) == 0)
        #expect(Fixtures.meanAbsoluteDifference(png, jpeg) < 8)
    }

    @Test func opaqueFormatReplacesTheFormatOnlyWhenNoPixelIsTransparent() throws {
        let options = VipsThumbnailOptions(width: 40, format: .png, opaqueFormat: .jpeg)
        let transparent = try thumbnail(Fixtures.png(width: 80, height: 60, alpha: true), options)
        #expect(transparent.format == .png)
        #expect(try Fixtures.decode(transparent.buffer.bytes).bands == 4)
        let gif = try thumbnail(Fixtures.gif(width: 80, height: 60, frames: 2), options)  // RGBA, all opaque
        #expect(gif.format == .jpeg)
        #expect(try Fixtures.decode(gif.buffer.bytes).loader.hasPrefix("jpegload"))
        let plain = try thumbnail(Fixtures.png(width: 80, height: 60), options)
        #expect(plain.format == .jpeg)
        let untouched = try thumbnail(Fixtures.gif(width: 80, height: 60, frames: 2), .init(width: 40, format: .png))
        #expect(untouched.format == .png)
    }
}
