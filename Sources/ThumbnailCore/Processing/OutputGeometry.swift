/// How a thumbnail is cut, in pixels, computed once from the source's displayed (EXIF-oriented)
/// size. Every decoded copy of a source is cut to the same size, so a thumbnail has one size
/// whichever copy made it.
public enum Resize: Sendable, Equatable {
    /// Scaled to exactly this size (`inside` keeps the aspect by construction; `fill` stretches).
    case exact(width: Int, height: Int)
    /// Scaled to cover this box, then cropped to it (never larger than the source, and of the
    /// requested aspect ratio: `OutputGeometry.coverBox`).
    case cover(width: Int, height: Int, crop: Crop)
}

public enum OutputGeometry {
    /// The size of the scaled image before any crop, as a fraction of the source per axis
    /// (never above 1: no upscaling).
    public static func scale(for spec: TransformSpec, sourceWidth: Int, sourceHeight: Int) -> (x: Double, y: Double) {
        let sw = Double(max(1, sourceWidth))
        let sh = Double(max(1, sourceHeight))
        let w = Double(spec.width)
        switch spec.fit {
        case .inside:
            let s = min(w / sw, spec.height.map { Double($0) / sh } ?? .infinity, 1)
            return (s, s)
        case .cover:
            let h = Double(spec.height ?? spec.width)
            let s = min(max(w / sw, h / sh), 1)
            return (s, s)
        case .fill:
            return (min(w / sw, 1), min(Double(spec.height ?? spec.width) / sh, 1))
        }
    }

    /// The cut for `spec` of a source of this displayed size.
    public static func resize(for spec: TransformSpec, sourceWidth: Int, sourceHeight: Int) -> Resize {
        switch spec.fit {
        case .inside:
            let (s, _) = scale(for: spec, sourceWidth: sourceWidth, sourceHeight: sourceHeight)
            if s >= 1 { return .exact(width: sourceWidth, height: sourceHeight) }
            // The constraining side gets exactly the asked size; the other is rounded.
            let widthBound = Double(spec.width) / Double(sourceWidth) <= s
            let width = widthBound ? spec.width : max(1, Int((Double(sourceWidth) * s).rounded()))
            let height = widthBound ? max(1, Int((Double(sourceHeight) * s).rounded())) : spec.height!
            return .exact(width: min(width, sourceWidth), height: min(height, sourceHeight))
        case .fill:
            return .exact(width: min(spec.width, sourceWidth), height: min(spec.height ?? spec.width, sourceHeight))
        case .cover:
            let box = coverBox(
                width: spec.width, height: spec.height ?? spec.width, sourceWidth: sourceWidth,
                sourceHeight: sourceHeight)
            return .cover(width: box.width, height: box.height, crop: spec.crop)
        }
    }

    /// The box a cover is cut to: the requested one when the source is at least that large on
    /// both axes; otherwise the largest box of the requested aspect ratio that the source fills
    /// without upscaling. Someone asking for a square (an avatar) gets a square: 300 × 300 of a
    /// 290 × 442 photo is 290 × 290 (clamping each side alone gave 290 × 300), of a 100 × 50 one
    /// 50 × 50. The bound side is the source's exactly; the other is rounded to the nearest pixel.
    public static func coverBox(width: Int, height: Int, sourceWidth: Int, sourceHeight: Int) -> (
        width: Int, height: Int
    ) {
        let sw = max(1, sourceWidth)
        let sh = max(1, sourceHeight)
        guard width > sw || height > sh else { return (width, height) }
        // The axis whose request overshoots the source more binds: w / sw >= h / sh.
        if width * sh >= height * sw {
            return (sw, min(sh, max(1, (height * sw + width / 2) / width)))
        }
        return (min(sw, max(1, (width * sh + height / 2) / height)), sh)
    }
}
