/// The encoder used for the output.
public enum VipsOutputFormat: Sendable {
    /// JPEG (tuned by `VipsOptions.jpeg`); alpha is flattened onto white.
    case jpeg
    /// PNG (`VipsOptions.png`); alpha kept.
    case png
    /// Lossy WebP; alpha kept.
    case webp
    /// AVIF: HEIF with AV1, 8 bits (`VipsOptions.avif`); alpha kept.
    case avif
}
