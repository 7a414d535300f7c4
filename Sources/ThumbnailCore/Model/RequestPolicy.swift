/// What this instance lets a request ask for, beyond each parameter's own bounds.
public struct RequestPolicy: Sendable, Equatable {
    /// When non-empty, the only `w` values accepted, as requested (before `dpr` multiplies them).
    public var allowedWidths: [Int]
    /// When non-empty, the only `h` values accepted, as requested.
    public var allowedHeights: [Int]
    /// When non-empty, the only `q` values a request may name (one without `q` gets
    /// `defaultQuality`).
    public var allowedQualities: [Int]
    /// A `w` outside `allowedWidths` is rounded up to the next allowed width (the largest when it
    /// is above all) instead of refused; `h`, when given and heights are not restricted, is scaled
    /// with it so that the box keeps its shape. The set of variants stays the allowed one.
    public var snapWidths: Bool
    /// Signed URLs are on: `sig` is required and `exp` accepted (the host checks the signature
    /// before anything else; the parser only checks their form).
    public var signed: Bool

    public init(
        allowedWidths: [Int] = [], allowedHeights: [Int] = [], allowedQualities: [Int] = [], snapWidths: Bool = false,
        signed: Bool = false
    ) {
        self.allowedWidths = allowedWidths
        self.allowedHeights = allowedHeights
        self.allowedQualities = allowedQualities
        self.snapWidths = snapWidths
        self.signed = signed
    }

    /// The quality of a request without `q`: `TransformSpec.defaultQuality` when it is allowed,
    /// else the allowed one nearest to it (the higher of two as near), so that a bare URL never
    /// makes a variant the list keeps a named `q` from making.
    public var defaultQuality: Int {
        let standard = TransformSpec.defaultQuality
        guard !allowedQualities.isEmpty, !allowedQualities.contains(standard) else { return standard }
        return allowedQualities.min { a, b in
            let (da, db) = (abs(a - standard), abs(b - standard))
            return da != db ? da < db : a > b
        }!
    }

    /// The allowed width a requested `width` snaps to: the smallest allowed one at least as wide,
    /// else the widest. nil when every width is allowed or snapping is off.
    public func snappedWidth(_ width: Int) -> Int? {
        guard snapWidths, let widest = allowedWidths.max() else { return nil }
        return allowedWidths.filter { $0 >= width }.min() ?? widest
    }
}
