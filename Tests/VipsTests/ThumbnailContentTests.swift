import TestSupport
import Testing
import Vips

@Suite("Vips.thumbnail colour, frames, alpha, metadata, errors")
struct ThumbnailContentTests {
    @Test(arguments: [VipsOutputFormat.jpeg, .png], Input.allCases)
    func cmykBecomesSRGB(format: VipsOutputFormat, input: Input) throws {
        let cmyk = Fixtures.cmykJPEG(width: 64, height: 64)
        #expect(try Fixtures.decode(cmyk).interpretation == "cmyk")
        let (_, decoded) = try thumbnailDecoded(cmyk, .exact(width: 32, height: 32), format: format, from: input)
        #expect(decoded.bands == 3)
        #expect(decoded.interpretation == "srgb")
        #expect(!decoded.hasICCProfile)
        // The built-in CMYK profile maps this ink to about (238, 60, 58): a clear red.
        let pixel = decoded.pixel(16, 16)
        #expect(isClose(pixel, [238, 60, 58], tolerance: 20), "got \(pixel)")
    }

    @Test(arguments: [VipsOutputFormat.png, .jpeg, .webp], Input.allCases)
    func embeddedProfileIsHonouredThenStripped(format: VipsOutputFormat, input: Input) throws {
        let p3 = Fixtures.jpegWithICC(width: 64, height: 64)
        let source = try Fixtures.decode(p3)
        #expect(source.hasICCProfile)
        // The stored numbers are P3 values, visibly different from the sRGB colour they mean.
        #expect(!isClose(source.pixel(32, 32), Fixtures.iccSourceColour, tolerance: 10))

        let (_, decoded) = try thumbnailDecoded(p3, .exact(width: 32, height: 32), format: format, from: input)
        #expect(!decoded.hasICCProfile)
        #expect(!decoded.hasEXIF)
        let pixel = decoded.pixel(16, 16)
        #expect(isClose(pixel, Fixtures.iccSourceColour, tolerance: format == .png ? 6 : 12), "got \(pixel)")
    }

    /// 8.14's icc_transform silently fell back to sRGB for a profile without the (relative)
    /// intent it was asked for: the stored red came out red instead of the blue it means.
    @Test(arguments: [VipsOutputFormat.png, .jpeg], Input.allCases)
    func perceptualOnlyProfileIsConverted(format: VipsOutputFormat, input: Input) throws {
        let source = Fixtures.pngWithPerceptualOnlyProfile(width: 64, height: 64)
        let stored = try Fixtures.decode(source)
        #expect(stored.hasICCProfile)
        #expect(isClose(stored.pixel(32, 32), Fixtures.perceptualOnlyStored, tolerance: 0))

        let (_, decoded) = try thumbnailDecoded(source, .exact(width: 32, height: 32), format: format, from: input)
        #expect(!decoded.hasICCProfile)
        let pixel = decoded.pixel(16, 16)
        #expect(isClose(pixel, Fixtures.perceptualOnlyMeant, tolerance: format == .png ? 3 : 12), "got \(pixel)")
    }

    /// A profile lcms2 cannot parse, or one with no table for reading (here only B2A0), is ignored
    /// as browsers ignore it: the pixels are taken as sRGB and the thumbnail is made.
    @Test(arguments: Input.allCases)
    func unusableProfilesAreTakenAsSRGB(input: Input) throws {
        let colour: [UInt8] = [200, 30, 40]
        var unparseable = [UInt8](repeating: 0, count: 128)
        unparseable.replaceSubrange(16..<20, with: Array("RGB ".utf8))
        let outputOnly = renamingTag("A2B0", to: "B2A0", in: Fixtures.perceptualOnlyProfile())
        for profile in [unparseable, outputOnly] {
            let source = Fixtures.uniform(colour, profile: profile, width: 64, height: 64, jpeg: true)
            #expect(try Fixtures.decode(source).hasICCProfile)
            let (_, decoded) = try thumbnailDecoded(source, .exact(width: 32, height: 32), format: .png, from: input)
            #expect(isClose(decoded.pixel(16, 16), colour, tolerance: 6), "got \(decoded.pixel(16, 16))")
        }
    }

    /// A profile that says it can be read perceptually but whose table is broken: the transform
    /// fails, and that is an error, never pixels passed on unconverted.
    @Test func aFailingTransformIsAnError() throws {
        let broken = renamingTag("mft2", to: "junk", in: Fixtures.perceptualOnlyProfile())
        let source = Fixtures.uniform([200, 30, 40], profile: broken, width: 64, height: 64, jpeg: true)
        for input in [Input.original, .copy] {
            let error = #expect(throws: VipsError.self) {
                try thumbnail(source, .exact(width: 32, height: 32), format: .png, from: input)
            }
            guard case .decodeFailed = error else {
                Issue.record("expected decodeFailed, got \(String(describing: error))")
                continue
            }
        }
    }

    /// `profile` with the first occurrence of the 4-byte `old` replaced by `new`.
    private func renamingTag(_ old: String, to new: String, in profile: [UInt8]) -> [UInt8] {
        let needle = Array(old.utf8)
        var copy = profile
        let start = (0...(profile.count - 4)).first { Array(profile[$0..<$0 + 4]) == needle }!
        copy.replaceSubrange(start..<start + 4, with: Array(new.utf8))
        return copy
    }

    @Test(arguments: [VipsOutputFormat.jpeg, .png, .webp, .avif], Input.allCases)
    func allMetadataIsStripped(format: VipsOutputFormat, input: Input) throws {
        let source = Fixtures.jpeg(width: 64, height: 48, orientation: 1)
        #expect(try Fixtures.decode(source).hasEXIF)
        let (_, decoded) = try thumbnailDecoded(source, .exact(width: 32, height: 24), format: format, from: input)
        #expect(!decoded.hasEXIF)
        #expect(!decoded.hasICCProfile)
        #expect(decoded.orientation == nil)
    }

    @Test(arguments: [VipsOutputFormat.jpeg, .png, .webp, .avif], Input.allCases)
    func animatedGIFGivesTheFirstFrameOnly(format: VipsOutputFormat, input: Input) throws {
        let gif = Fixtures.gif(width: 40, height: 30, frames: 3)
        let (result, decoded) = try thumbnailDecoded(gif, .exact(width: 20, height: 15), format: format, from: input)
        #expect(result.width == 20 && result.height == 15)
        #expect(decoded.pageCount == 1)
        #expect(
            isClose(decoded.pixel(10, 7), Fixtures.gifFrameColours[0], tolerance: tolerance(of: format)),
            "got \(decoded.pixel(10, 7))")
    }

    @Test(arguments: [VipsOutputFormat.png, .webp, .avif], Input.allCases)
    func alphaIsKept(format: VipsOutputFormat, input: Input) throws {
        let png = Fixtures.png(width: 64, height: 64, alpha: true)
        let (_, decoded) = try thumbnailDecoded(png, .exact(width: 32, height: 32), format: format, from: input)
        #expect(decoded.bands == 4)
        #expect(decoded.pixel(16, 4)[3] > 250)  // top half opaque
        #expect(decoded.pixel(16, 28)[3] < 5)  // bottom half transparent
    }

    @Test(arguments: Input.allCases)
    func jpegFlattensAlphaOntoWhite(input: Input) throws {
        let png = Fixtures.png(width: 64, height: 64, alpha: true)
        let (_, decoded) = try thumbnailDecoded(png, .exact(width: 32, height: 32), format: .jpeg, from: input)
        #expect(decoded.bands == 3)
        #expect(isClose(decoded.pixel(4, 4), Fixtures.quadrantColours[0], tolerance: 20))
        #expect(isClose(decoded.pixel(16, 28), [255, 255, 255], tolerance: 6))
    }

    @Test(arguments: [VipsOutputFormat.jpeg, .webp])
    func truncatedJPEGFailsToDecode(format: VipsOutputFormat) throws {
        // libvips would otherwise fill the missing rows with grey; `fail_on=error` makes it fail.
        let jpeg = Fixtures.jpeg(width: 400, height: 300)
        let truncated = Array(jpeg.prefix(jpeg.count / 2))
        let error = #expect(throws: VipsError.self) {
            try thumbnail(truncated, .exact(width: 100, height: 75), format: format)
        }
        guard case .decodeFailed = error else {
            Issue.record("expected decodeFailed, got \(String(describing: error))")
            return
        }
    }

    @Test func truncatedSourceFailsToMakeACopy() throws {
        let jpeg = Fixtures.jpeg(width: 400, height: 300)
        let error = #expect(throws: VipsError.self) { try decode(Array(jpeg.prefix(jpeg.count / 2))) }
        guard case .decodeFailed = error else {
            Issue.record("expected decodeFailed, got \(String(describing: error))")
            return
        }
    }

    @Test(arguments: [Input.original, .reducedCopy])
    func pngBombFailsToDecode(input: Input) throws {
        // The header claims 50,000 × 50,000 and the data is missing: a decode error (the service's
        // pixel cap refuses it before this point; here libvips must still fail, not hand back grey).
        let error = #expect(throws: VipsError.self) {
            try thumbnail(Fixtures.pngBomb(), .exact(width: 100, height: 100), from: input)
        }
        guard case .decodeFailed = error else {
            Issue.record("expected decodeFailed, got \(String(describing: error))")
            return
        }
    }

    @Test func unknownAndBlockedInputs() {
        let cut = VipsCut.exact(width: 10, height: 10)
        #expect(throws: VipsError.unknownFormat) { try thumbnail(Array(repeating: 7, count: 100), cut) }
        #expect(throws: VipsError.unknownFormat) { try thumbnail(Fixtures.svg(), cut) }
        #expect(throws: VipsError.unknownFormat) { try decode(Fixtures.svg()) }
        // A loader the options do not list is refused like a blocked one.
        let pngOnly = options.allowing(["pngload_buffer"])
        #expect(throws: VipsError.blockedLoader("jpegload_buffer")) {
            try withBytes(Fixtures.jpeg(width: 8, height: 8)) { bytes throws(VipsError) in
                try Vips.thumbnail(
                    of: .encoded(bytes), cut: cut, encoding: VipsEncoding(format: .png), options: pngOnly)
            }
        }
    }

    @Test(arguments: [VipsOutputFormat.jpeg, .png, .webp, .avif], Input.allCases)
    func otherSourceFormats(format: VipsOutputFormat, input: Input) throws {
        for source in [
            Fixtures.webp(width: 80, height: 60), Fixtures.avif(width: 80, height: 60),
            Fixtures.tiff(width: 80, height: 60),
        ] {
            let (result, decoded) = try thumbnailDecoded(
                source, .exact(width: 40, height: 30), format: format, from: input)
            #expect(result.width == 40 && result.height == 30)
            #expect(isClose(decoded.pixel(30, 22), Fixtures.quadrantColours[3], tolerance: tolerance(of: format)))
        }
    }

    @Test func meanAbsoluteDifferenceOfSimilarThumbnailsIsSmall() throws {
        let source = Fixtures.png(width: 200, height: 100)
        let cut = VipsCut.exact(width: 100, height: 50)
        let png = try Fixtures.decode(thumbnail(source, cut, format: .png).buffer.bytes)
        let jpeg = try Fixtures.decode(thumbnail(source, cut, format: .jpeg, quality: 90).buffer.bytes)
        #expect(Fixtures.meanAbsoluteDifference(png, png) == 0)
        #expect(Fixtures.meanAbsoluteDifference(png, jpeg) < 8)
    }

    @Test(arguments: Input.allCases)
    func opaqueFormatReplacesTheFormatOnlyWhenNoPixelIsTransparent(input: Input) throws {
        let cut = VipsCut.exact(width: 40, height: 30)
        func make(_ bytes: [UInt8], opaque: VipsOutputFormat? = .jpeg) throws -> VipsThumbnail {
            try thumbnail(bytes, cut, format: .png, opaqueFormat: opaque, from: input)
        }
        let transparent = try make(Fixtures.png(width: 80, height: 60, alpha: true))
        #expect(transparent.format == .png)
        #expect(try Fixtures.decode(transparent.buffer.bytes).bands == 4)
        let gif = try make(Fixtures.gif(width: 80, height: 60, frames: 2))  // RGBA, all opaque
        #expect(gif.format == .jpeg)
        #expect(try Fixtures.decode(gif.buffer.bytes).loader.hasPrefix("jpegload"))
        let plain = try make(Fixtures.png(width: 80, height: 60))
        #expect(plain.format == .jpeg)
        let untouched = try make(Fixtures.gif(width: 80, height: 60, frames: 2), opaque: nil)
        #expect(untouched.format == .png)
    }

    @Test func aCopyDropsAnUnusedAlphaBandAndKeepsAUsedOne() throws {
        // Every GIF loads with an alpha band; this one uses none of it.
        #expect(try decode(Fixtures.gif(width: 80, height: 60, frames: 2)).bands == 3)
        #expect(try decode(Fixtures.png(width: 80, height: 60, alpha: true)).bands == 4)
        let copy = try decode(Fixtures.jpeg(width: 2000, height: 1000), width: 1024, height: 1024)
        #expect((copy.width, copy.height, copy.bands) == (1024, 512, 3))
        #expect(copy.byteCount == 1024 * 512 * 3)
    }
}
