/// An image as `PillowReference.describe` reads it: format, canvas size, loop count, and every
/// frame as a viewer shows it (composited), reduced to numbers a test can compare.
public struct AnimationDescription: Sendable, Decodable {
    /// One frame, composited (after the earlier frames' disposal and with transparency), and
    /// resized when the description was asked for at another size.
    public struct Frame: Sendable, Decodable {
        /// How long the frame is shown, as stored (GIF: centiseconds × 10; no clamping of the
        /// short delays that browsers stretch).
        public let durationMs: Int
        /// The frame's `size` × `size` grid of premultiplied means.
        public let grid: FrameGrid
        /// Per cell of `grid`, row by row: whether the source frame is one colour over the cell
        /// and as far around it as a Lanczos-3 kernel reaches at the size asked for. Such a cell's
        /// mean does not depend on how an edge is resampled, chroma-subsampled or dithered.
        public let flat: [Bool]
        /// The premultiplied mean of the whole frame (R, G, B, A), 0...255.
        public let mean: [Double]
        /// The share of pixels with alpha below 128.
        public let transparentFraction: Double
        /// GIF only: the rectangle the frame's image block covers (x, y, width, height).
        public let region: [Int]?
        /// GIF only: the frame's disposal as stored (0...3; 4...7 are reserved).
        public let disposal: Int?

        enum CodingKeys: String, CodingKey {
            case durationMs = "duration"
            case grid, flat, mean, region, disposal
            case transparentFraction = "transparent"
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            durationMs = try container.decode(Int.self, forKey: .durationMs)
            let cells = try container.decode([Double].self, forKey: .grid)
            let size = Int(Double(cells.count / 4).squareRoot())
            guard size * size * 4 == cells.count else {
                throw DecodingError.dataCorruptedError(
                    forKey: .grid, in: container, debugDescription: "\(cells.count) values are no square grid")
            }
            grid = FrameGrid(size: size, values: cells)
            flat = try container.decode([Bool].self, forKey: .flat)
            mean = try container.decode([Double].self, forKey: .mean)
            transparentFraction = try container.decode(Double.self, forKey: .transparentFraction)
            region = try container.decodeIfPresent([Int].self, forKey: .region)
            disposal = try container.decodeIfPresent(Int.self, forKey: .disposal)
        }
    }

    /// Pillow's name of the format: "GIF", "WEBP", "PNG", "JPEG".
    public let format: String
    /// The canvas.
    public let width: Int
    public let height: Int
    /// The loop count as stored: GIF's NETSCAPE2.0 repeat count (nil: no such block), WebP's
    /// ANIM loop count; nil for a still image.
    public let loop: Int?
    public let frames: [Frame]

    /// How many times a viewer plays the animation, 0 forever. GIF stores the repeats after the
    /// first play (n plays n + 1 times in browsers, and libvips reads it so; no block plays once);
    /// WebP stores the plays. The one figure to compare across formats.
    public var plays: Int {
        guard let loop else { return 1 }
        return format == "GIF" && loop != 0 ? loop + 1 : loop
    }

    public var durations: [Int] { frames.map(\.durationMs) }
}
