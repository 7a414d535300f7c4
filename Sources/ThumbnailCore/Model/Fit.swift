/// How a thumbnail fills its box.
public enum Fit: String, Sendable, Hashable, CaseIterable {
    /// Within w×h, aspect kept (the default).
    case inside
    /// Fills w×h, aspect kept, the overflow cropped; of a smaller source, the largest box of
    /// w×h's shape it fills (`OutputGeometry.coverBox`).
    case cover
    /// Stretched to w×h.
    case fill
}
