/// The output's exact size, computed by the caller from the source's displayed (EXIF-oriented)
/// size, so a thumbnail has one size whichever input (original or decoded copy) made it. The
/// pipeline never upscales: a side larger than the input's is clamped to it.
public enum VipsCut: Sendable, Equatable {
    /// Scaled to exactly width × height (aspect is the caller's business: `inside` keeps it by
    /// construction, `fill` stretches).
    case exact(width: Int, height: Int)
    /// Scaled to cover width × height, then cropped to it.
    case cover(width: Int, height: Int, crop: VipsCrop)

    var width: Int {
        switch self {
        case .exact(let width, _), .cover(let width, _, _): width
        }
    }

    var height: Int {
        switch self {
        case .exact(_, let height), .cover(_, let height, _): height
        }
    }
}
