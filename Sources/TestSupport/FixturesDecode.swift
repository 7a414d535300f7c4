internal import Vips

/// Why `Fixtures.decode` failed.
public struct FixtureDecodeError: Error, CustomStringConvertible {
    public let description: String
}

extension Fixtures {
    /// Decodes the first page of any image libvips can read (libvips' untrusted loaders, such as
    /// SVG, stay blocked: `Vips.initialize` blocks them process-wide). `allPages`: every page, as
    /// a strip of frames (`DecodedImage.frames`, `pixel(_:_:frame:)`).
    public static func decode(_ bytes: [UInt8], allPages: Bool = false) throws -> DecodedImage {
        let image: VipsInspection
        do { image = try VipsInspection(decoding: bytes, allPages: allPages) } catch {
            throw FixtureDecodeError(description: "\(error)")
        }
        return DecodedImage(
            loader: image.loader, width: image.width, height: image.height, pageHeight: image.pageHeight,
            bands: image.bands, interpretation: image.interpretation, hasICCProfile: image.hasICCProfile,
            hasEXIF: image.hasEXIF, orientation: image.orientation, pageCount: image.pageCount,
            delays: image.delays, loop: image.loop, samples: image.samples)
    }

    /// Mean absolute difference per sample (0...255) of two images of the same size and bands.
    public static func meanAbsoluteDifference(_ a: DecodedImage, _ b: DecodedImage) -> Double {
        precondition(a.width == b.width && a.height == b.height && a.bands == b.bands, "images differ in shape")
        guard !a.samples.isEmpty else { return 0 }
        var total = 0
        for index in a.samples.indices { total += abs(Int(a.samples[index]) - Int(b.samples[index])) }
        return Double(total) / Double(a.samples.count)
    }
}
