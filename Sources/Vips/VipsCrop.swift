/// Which part of the image `.cover` keeps.
public enum VipsCrop: Sendable {
    /// The centre.
    case centre
    /// The most "interesting" region by libvips' attention heuristic (skin, saturation, edges).
    case attention
}
