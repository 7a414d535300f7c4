/// What this instance lets a request ask for, beyond each parameter's own bounds.
public struct RequestPolicy: Sendable, Equatable {
    /// When non-empty, the only `w` values accepted, as requested (before `dpr` multiplies them).
    public var allowedWidths: [Int]
    /// When non-empty, the only `h` values accepted, as requested.
    public var allowedHeights: [Int]
    /// Signed URLs are on: `sig` is required and `exp` accepted (the host checks the signature
    /// before anything else; the parser only checks their form).
    public var signed: Bool

    public init(allowedWidths: [Int] = [], allowedHeights: [Int] = [], signed: Bool = false) {
        self.allowedWidths = allowedWidths
        self.allowedHeights = allowedHeights
        self.signed = signed
    }
}
