/// Why an animated source was answered with its first frame as a still, in a format that would
/// have kept it animated: it is over a limit. Never a silent truncation: the answer names the
/// limit (`X-Thumbd-First-Frame`).
public enum FirstFrameReason: String, Sendable, Equatable {
    /// More frames than `--max-frames`.
    case maxFrames = "max-frames"
    /// All frames together have more pixels than `--max-source-pixels`.
    case maxPixels = "max-pixels"
    /// Making every frame would need more decode memory than the whole work budget (`--work-bytes`).
    case workBytes = "work-bytes"
}
