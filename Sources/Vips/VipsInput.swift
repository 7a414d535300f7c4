/// What the pipeline starts from.
public enum VipsInput {
    /// Encoded bytes (a fetched original): decoded with shrink-on-load, streaming into the resize.
    case encoded(UnsafeRawBufferPointer)
    /// A decoded copy made earlier by `Vips.decode`: only resized and encoded.
    case decoded(VipsDecodedImage)
}
