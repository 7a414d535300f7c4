/// How the output box is filled.
public enum VipsFit: Sendable {
    /// Fit within the box, keeping the aspect ratio.
    case inside
    /// Fill the box, keeping the aspect ratio, then crop the overflow.
    case cover
    /// Stretch to exactly the box (each side clamped to the source's side).
    case fill
}
