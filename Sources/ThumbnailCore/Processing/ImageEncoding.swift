/// Makes one thumbnail of an exact size — from the original bytes (decoded with shrink-on-load and
/// streamed straight to the output) or from a decoded copy — and encodes it with all metadata
/// stripped. Called on worker threads only; blocking is fine. The default is libvips (in the
/// service).
public protocol ImageEncoding: Sendable {
    associatedtype Decoded: Sendable

    func encode(_ input: EncodeInput<Decoded>, resize: Resize, output: OutputChoice, deadline: JobDeadline)
        throws(ThumbnailError)
        -> EncodedImage
}

/// The three image jobs together, as the pipeline needs them (one type does all three, so the
/// decoded copies one makes are the ones the other cuts from).
public typealias ImageProcessing = ImageInspecting & ImageDecoding & ImageEncoding
