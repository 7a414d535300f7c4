/// Which part `cover` keeps.
public enum Crop: String, Sendable, Hashable, CaseIterable {
    case centre
    /// libvips' smart crop (the most "interesting" region).
    case attention
}
