import TestSupport
import Testing

@testable import Vips

/// Which loader opens a source is decided from its first bytes by thumbd, never by libvips'
/// search over every loader (whose SVG sniffer never returns on gzip data followed by junk).
@Suite("Vips format detection")
struct FormatDetectionTests {
    /// The old code never returned from the first call (libvips 8.14 spun in its SVG sniffer).
    @Test func gzipFollowedByJunkIsUnknownAtOnce() throws {
        let hostile = Fixtures.gzipThenJunk()
        #expect(hostile.count < 100)
        let start = ContinuousClock.now
        #expect(throws: VipsError.unknownFormat) { try header(hostile) }
        #expect(throws: VipsError.unknownFormat) { try thumbnail(hostile, .exact(width: 10, height: 10)) }
        #expect(throws: VipsError.unknownFormat) { try decode(hostile) }
        // Even with every loader allowed: nothing here knows gzip or SVG.
        #expect(throws: VipsError.unknownFormat) {
            try header(hostile, options: options.allowing(["svgload_buffer", "magickload_buffer"]))
        }
        #expect(ContinuousClock.now - start < .seconds(10))  // microseconds of work; loose for a loaded CI
    }

    @Test(arguments: [
        ("jpeg", Fixtures.jpeg(width: 16, height: 8), "jpegload_buffer"),
        ("png", Fixtures.png(width: 16, height: 8), "pngload_buffer"),
        ("webp", Fixtures.webp(width: 16, height: 8), "webpload_buffer"),
        ("gif", Fixtures.gif(width: 16, height: 8, frames: 1), "gifload_buffer"),
        ("avif", Fixtures.avif(width: 16, height: 8), "heifload_buffer"),
        ("tiff", Fixtures.tiff(width: 16, height: 8), "tiffload_buffer"),
        ("bigtiff", Fixtures.tiff(width: 16, height: 8, big: true), "tiffload_buffer"),
    ])
    func everyAllowedFormatIsRecognisedAndMade(name: String, bytes: [UInt8], loader: String) throws {
        #expect(try header(bytes).loader == loader)
        let result = try thumbnail(bytes, .exact(width: 8, height: 4))
        #expect(result.width == 8 && result.height == 4)
        #expect(try decode(bytes).width == 16)
    }

    @Test func everyHEIFBrandLibvipsKnowsIsRecognised() {
        for brand in ["heic", "heix", "hevc", "heim", "heis", "hevm", "hevs", "mif1", "msf1", "avif"] {
            #expect(sniff(ftyp(brand)) == "heifload_buffer", "\(brand)")
        }
        // Not ISO-BMFF HEIF: another brand (an MP4), a box too large or of an odd size, no ftyp.
        for bytes in [
            ftyp("isom"), ftyp("avif", size: 4096), ftyp("avif", size: 30), Array("\0\0\0\u{18}moovavif".utf8),
        ] {
            #expect(sniff(bytes) == nil)
        }
    }

    @Test func bothTIFFByteOrdersAreRecognised() {
        for prefix in ["II*\0", "MM\0*", "II+\0", "MM\0+"] {
            #expect(sniff(Array(prefix.utf8) + [0, 0, 0, 8]) == "tiffload_buffer")
        }
    }

    /// A known signature followed by junk fails as a clean error (the loader's own sniffer or its
    /// header read says no), quickly, and never reaches the search over every loader: the gzip
    /// junk after it would hang SVG's sniffer.
    @Test(arguments: [
        ("jpeg", [0xFF, 0xD8, 0xFF] as [UInt8]), ("png", [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]),
        ("webp", Array("RIFF\u{1}\0\0\0WEBP".utf8)), ("gif", Array("GIF89a".utf8)), ("tiff", Array("II*\0".utf8)),
        ("heif", [0, 0, 0, 0x18] + Array("ftypavif".utf8) + [0, 0, 0, 0]),
    ])
    func aSignatureFollowedByJunkFailsCleanly(name: String, signature: [UInt8]) {
        let start = ContinuousClock.now
        for junk in [Fixtures.gzipThenJunk(), [UInt8](repeating: 0x5A, count: 2_000)] {
            let bytes = signature + junk
            for call in [
                { _ = try header(bytes) }, { _ = try thumbnail(bytes, .exact(width: 10, height: 10)) },
                { _ = try decode(bytes) },
            ] as [() throws -> Void] {
                let error = #expect(throws: VipsError.self) { try call() }
                switch error {
                case .unknownFormat, .decodeFailed: break
                default: Issue.record("\(name): \(String(describing: error))")
                }
            }
        }
        #expect(ContinuousClock.now - start < .seconds(10))
    }

    @Test func emptyAndShortInputsAreUnknown() {
        for bytes in [[], [0xFF], [0xFF, 0xD8], Array("GIF8".utf8), Array("RIFF".utf8)] as [[UInt8]] {
            #expect(sniff(bytes) == nil)
            #expect(throws: VipsError.unknownFormat) { try header(bytes) }
        }
    }

    private func sniff(_ bytes: [UInt8]) -> String? {
        bytes.withUnsafeBytes { VipsLoaderSignature.loader(of: $0) }
    }

    private func ftyp(_ brand: String, size: Int = 24) -> [UInt8] {
        let sizeBytes = (0..<4).reversed().map { UInt8(truncatingIfNeeded: size >> (8 * $0)) }
        return sizeBytes + Array("ftyp\(brand)".utf8) + [0, 0, 0, 0] + Array("mif1".utf8)
            + [UInt8](
                repeating: 0, count: max(0, size - 20))
    }
}
