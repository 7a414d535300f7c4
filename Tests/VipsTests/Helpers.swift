import TestSupport
import Testing
import Vips

/// Loader nicknames the service allows (everything but the untrusted ones).
let allowedLoaders: Set<String> = [
    "jpegload_buffer", "pngload_buffer", "webpload_buffer", "gifload_buffer", "heifload_buffer", "tiffload_buffer",
]

func header(_ bytes: [UInt8], allowed: Set<String> = allowedLoaders) throws(VipsError) -> VipsHeader {
    try bytes.withUnsafeBytes { buffer in
        Result { () throws(VipsError) in try Vips.header(of: buffer, allowedLoaders: allowed) }
    }.get()
}

func thumbnail(_ bytes: [UInt8], _ options: VipsThumbnailOptions) throws(VipsError) -> VipsThumbnail {
    try bytes.withUnsafeBytes { buffer in
        Result { () throws(VipsError) in try Vips.thumbnail(of: buffer, options: options) }
    }.get()
}

/// Thumbnails and decodes the result.
func thumbnailDecoded(_ bytes: [UInt8], _ options: VipsThumbnailOptions) throws -> (VipsThumbnail, DecodedImage) {
    let result = try thumbnail(bytes, options)
    let decoded = try Fixtures.decode(result.buffer.bytes)
    #expect(decoded.width == result.width)
    #expect(decoded.height == result.height)
    return (result, decoded)
}

/// Whether every band of `pixel` is within `tolerance` of `expected`.
func isClose(_ pixel: [Double], _ expected: [UInt8], tolerance: Double) -> Bool {
    guard pixel.count >= expected.count else { return false }
    return zip(pixel, expected).allSatisfy { abs($0 - Double($1)) <= tolerance }
}

func loaderName(of format: VipsOutputFormat) -> String {
    switch format {
    case .jpeg: "jpegload_buffer"
    case .png: "pngload_buffer"
    case .webp: "webpload_buffer"
    case .avif: "heifload_buffer"
    }
}

/// Lossy codecs (and AV1's chroma subsampling) move colours a little; allow for it.
func tolerance(of format: VipsOutputFormat) -> Double {
    format == .png ? 4 : 40
}
