/// The encoder used for the output.
public enum VipsOutputFormat: Sendable {
    /// JPEG (tuned by `VipsOptions.jpeg`); alpha is flattened onto white.
    case jpeg
    /// PNG (`VipsOptions.png`); alpha kept.
    case png
    /// Lossy WebP; alpha kept; animated with `VipsEncoding.keepsAnimation`.
    case webp
    /// AVIF: HEIF with AV1, 8 bits (`VipsOptions.avif`); alpha kept.
    case avif
    /// GIF (cgif, a palette of up to 256 colours per frame, dithered); alpha kept as fully
    /// transparent or opaque; animated with `VipsEncoding.keepsAnimation`.
    case gif

    /// Whether the format can carry an animation (`VipsEncoding.keepsAnimation`).
    var animates: Bool { self == .gif || self == .webp }
}
