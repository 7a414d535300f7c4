import TestSupport
import Testing
import Vips

/// Options as the service passes them (`VipsImaging.defaultOptions`, which this module cannot
/// see): the loaders it takes, strict decoding, its encoder settings.
let options = VipsOptions(
    allowedLoaders: [
        "jpegload_buffer", "pngload_buffer", "webpload_buffer", "gifload_buffer", "heifload_buffer", "tiffload_buffer",
    ], failOn: .error, jpeg: .init(optimizeCoding: true, interlace: false), png: .init(compression: 6),
    avif: .init(effort: 2))

extension VipsOptions {
    /// The same options with other loaders.
    func allowing(_ loaders: Set<String>) -> VipsOptions {
        var copy = self
        copy.allowedLoaders = loaders
        return copy
    }
}

/// What a thumbnail is made from, as the service does it: the original bytes (streamed, first size)
/// or a decoded copy (later sizes). Most tests run on both.
enum Input: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case original
    /// A full-resolution decoded copy.
    case copy
    /// A decoded copy fitted inside 1024 × 1024, as the service keeps them.
    case reducedCopy

    var testDescription: String { rawValue }
}

/// `withUnsafeBytes` that keeps the typed error (the Array one only rethrows `any Error`).
func withBytes<T>(_ bytes: [UInt8], _ body: (UnsafeRawBufferPointer) throws(VipsError) -> T) throws(VipsError) -> T {
    try bytes.withUnsafeBytes { buffer in Result { () throws(VipsError) in try body(buffer) } }.get()
}

func header(_ bytes: [UInt8], options: VipsOptions = options) throws(VipsError) -> VipsHeader {
    try withBytes(bytes) { buffer throws(VipsError) in try Vips.header(of: buffer, options: options) }
}

func decode(
    _ bytes: [UInt8], width: Int = 10_000_000, height: Int = 10_000_000, timeLimit: Duration? = nil
) throws(VipsError) -> VipsDecodedImage {
    try withBytes(bytes) { buffer throws(VipsError) in
        try Vips.decode(of: buffer, fittingWidth: width, height: height, options: options, timeLimit: timeLimit)
    }
}

/// `timeLimit` applies to each call (decoding the copy, cutting from it).
func thumbnail(
    _ bytes: [UInt8], _ cut: VipsCut, format: VipsOutputFormat = .jpeg, quality: Int = 80,
    opaqueFormat: VipsOutputFormat? = nil, keepsAnimation: Bool = false, from input: Input = .original,
    timeLimit: Duration? = nil
) throws(VipsError) -> VipsThumbnail {
    let encoding = VipsEncoding(
        format: format, quality: quality, opaqueFormat: opaqueFormat, keepsAnimation: keepsAnimation)
    switch input {
    case .original:
        return try withBytes(bytes) { buffer throws(VipsError) in
            try Vips.thumbnail(
                of: .encoded(buffer), cut: cut, encoding: encoding, options: options, timeLimit: timeLimit)
        }
    case .copy:
        return try Vips.thumbnail(
            of: .decoded(decode(bytes, timeLimit: timeLimit)), cut: cut, encoding: encoding, options: options,
            timeLimit: timeLimit)
    case .reducedCopy:
        return try Vips.thumbnail(
            of: .decoded(decode(bytes, width: 1024, height: 1024, timeLimit: timeLimit)), cut: cut,
            encoding: encoding, options: options, timeLimit: timeLimit)
    }
}

/// Thumbnails and decodes the result, checking the reported size against the file's.
func thumbnailDecoded(
    _ bytes: [UInt8], _ cut: VipsCut, format: VipsOutputFormat = .jpeg, from input: Input = .original
) throws -> (VipsThumbnail, DecodedImage) {
    let result = try thumbnail(bytes, cut, format: format, from: input)
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
    case .gif: "gifload_buffer"
    }
}

/// Lossy codecs (and AV1's chroma subsampling, GIF's palette) move colours a little; allow for it.
func tolerance(of format: VipsOutputFormat) -> Double {
    format == .png ? 4 : 40
}
