/// What a thumbnail is made from.
public enum EncodeInput<Decoded: Sendable> {
    case original(ImageBytes, SourceInfo)
    case decoded(DecodedSource<Decoded>)
}
