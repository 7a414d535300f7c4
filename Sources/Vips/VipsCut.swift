/// The output's exact size, computed by the caller from the source's displayed (EXIF-oriented)
/// size, so a thumbnail has one size whichever input (original or decoded copy) made it. The
/// pipeline never upscales: a cut larger than the input is clamped to it (`clamped`).
public enum VipsCut: Sendable, Equatable {
    /// Scaled to exactly width × height (aspect is the caller's business: `inside` keeps it by
    /// construction, `fill` stretches).
    case exact(width: Int, height: Int)
    /// Scaled to cover width × height, then cropped to it. Of an input smaller than the box, the
    /// largest box of the same aspect ratio that the input fills.
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

    /// This cut for an input of `inputWidth` × `inputHeight` (oriented): an exact side larger than
    /// the input's is clamped alone (`inside` and `fill` keep their own shapes by construction); a
    /// cover keeps its aspect ratio. The service's geometry (`OutputGeometry.coverBox` in
    /// ThumbnailCore) already passes cuts within the source; this keeps a larger one from
    /// upscaling or changing shape.
    func clamped(toWidth inputWidth: Int, height inputHeight: Int) -> VipsCut {
        let (sw, sh) = (max(1, inputWidth), max(1, inputHeight))
        switch self {
        case .exact(let width, let height):
            return .exact(width: min(width, sw), height: min(height, sh))
        case .cover(let width, let height, let crop):
            guard width > sw || height > sh else { return self }
            if width * sh >= height * sw {
                return .cover(width: sw, height: min(sh, max(1, (height * sw + width / 2) / width)), crop: crop)
            }
            return .cover(width: min(sw, max(1, (width * sh + height / 2) / height)), height: sh, crop: crop)
        }
    }
}
