/// The encoder used for the output.
public enum VipsOutputFormat: Sendable {
    /// Baseline JPEG with optimised Huffman tables; alpha is flattened onto white.
    case jpeg
    /// PNG, zlib level 6; alpha kept.
    case png
    /// Lossy WebP; alpha kept.
    case webp
    /// AVIF: HEIF with AV1, 8 bits, a moderate encoder effort; alpha kept.
    case avif
}
