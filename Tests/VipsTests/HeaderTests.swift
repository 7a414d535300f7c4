import TestSupport
import Testing
import Vips

@Suite("Vips.header")
struct HeaderTests {
    @Test func version() {
        #expect(Vips.version == "8.14.1")
    }

    @Test func initializeIsIdempotent() throws {
        Vips.initialize()
        Vips.initialize()
        // Still configured and working after the second call.
        #expect(try header(Fixtures.jpeg(width: 8, height: 8)).width == 8)
    }

    @Test func jpeg() throws {
        let header = try header(Fixtures.jpeg(width: 64, height: 48))
        #expect(
            header
                == VipsHeader(
                    loader: "jpegload_buffer", width: 64, height: 48, pageCount: 1, bands: 3, hasAlpha: false,
                    orientation: 1))
    }

    @Test func progressiveJPEGsAreReportedInterlaced() throws {
        let progressive = try header(Fixtures.jpeg(width: 64, height: 48, progressive: true))
        #expect(progressive.interlaced)
        #expect(progressive.bytesPerSample == 1)
        #expect(try header(Fixtures.jpeg(width: 64, height: 48)).interlaced == false)
    }

    @Test func jpegWithOrientation() throws {
        let header = try header(Fixtures.jpeg(width: 64, height: 48, orientation: 6))
        #expect(header.orientation == 6)
        #expect(header.width == 64 && header.height == 48)
        #expect(header.orientedWidth == 48 && header.orientedHeight == 64)
    }

    @Test func pngWithAlpha() throws {
        let header = try header(Fixtures.png(width: 30, height: 20, alpha: true))
        #expect(header.loader == "pngload_buffer")
        #expect(header.width == 30 && header.height == 20)
        #expect(header.bands == 4 && header.hasAlpha)
    }

    @Test func png() throws {
        let header = try header(Fixtures.png(width: 30, height: 20))
        #expect(header.bands == 3 && !header.hasAlpha)
    }

    @Test func webp() throws {
        let header = try header(Fixtures.webp(width: 50, height: 40))
        #expect(header.loader == "webpload_buffer")
        #expect(header.width == 50 && header.height == 40 && header.pageCount == 1)
    }

    @Test func animatedGIFReportsOnePageHeightAndTheFrameCount() throws {
        let header = try header(Fixtures.gif(width: 40, height: 30, frames: 3))
        #expect(header.loader == "gifload_buffer")
        #expect(header.width == 40 && header.height == 30)
        #expect(header.pageCount == 3)
    }

    @Test func avif() throws {
        let header = try header(Fixtures.avif(width: 64, height: 32))
        #expect(header.loader == "heifload_buffer")
        #expect(header.width == 64 && header.height == 32)
    }

    @Test func tiff() throws {
        let header = try header(Fixtures.tiff(width: 24, height: 12))
        #expect(header.loader == "tiffload_buffer")
        #expect(header.width == 24 && header.height == 12 && header.bands == 3)
    }

    /// thumbd recognises only the formats it can allow (`VipsLoaderSignature`): SVG is not one,
    /// whatever the options say, and libvips blocks its loader anyway (`Vips.initialize`).
    @Test func svgIsUnknownEvenWhenAllowed() {
        #expect(throws: VipsError.unknownFormat) { try header(Fixtures.svg()) }
        #expect(throws: VipsError.unknownFormat) {
            try header(
                Fixtures.svg(), options: options.allowing(options.allowedLoaders.union(["svgload_buffer"])))
        }
    }

    @Test func disallowedLoaderIsReportedByNickname() {
        #expect(throws: VipsError.blockedLoader("jpegload_buffer")) {
            try header(Fixtures.jpeg(width: 8, height: 8), options: options.allowing(["pngload_buffer"]))
        }
    }

    @Test func garbageIsUnknown() {
        #expect(throws: VipsError.unknownFormat) { try header(Array("this is not an image at all".utf8)) }
        #expect(throws: VipsError.unknownFormat) { try header([]) }
    }

    @Test func truncatedHeaderFailsToDecode() {
        let jpeg = Fixtures.jpeg(width: 64, height: 48)
        let error = #expect(throws: VipsError.self) { try header(Array(jpeg.prefix(8))) }
        guard case .decodeFailed = error else {
            Issue.record("expected decodeFailed, got \(String(describing: error))")
            return
        }
    }

    @Test func pngBombHeaderIsReadWithoutDecoding() throws {
        // The bomb's pixel data is missing, so any decode fails (see ThumbnailContentTests): a header
        // that comes back proves nothing was decoded.
        let bomb = Fixtures.pngBomb(width: 50_000, height: 50_000)
        let result = try header(bomb)
        #expect(result.loader == "pngload_buffer")
        #expect(result.width == 50_000 && result.height == 50_000)
    }
}
