/// What `PillowReference.makeAnimatedGIF` and `makeAnimatedWebP` draw: frames of flat
/// rectangles on a canvas, each shown for its duration, with the GIF disposal that says what is
/// left of it for the next frame. `composited()` is the expected result, as a browser shows it.
public struct AnimationSource: Sendable, Encodable {
    /// A rectangle of one colour (RGBA; alpha 0 or 255) inside a frame, at an offset within it.
    public struct Patch: Sendable, Encodable {
        public var x: Int
        public var y: Int
        public var width: Int
        public var height: Int
        public var fill: [UInt8]

        public init(x: Int, y: Int, width: Int, height: Int, fill: [UInt8]) {
            (self.x, self.y, self.width, self.height, self.fill) = (x, y, width, height, fill)
        }
    }

    /// One frame: a rectangle of the canvas (the whole canvas or a part at an offset), filled
    /// with `fill` and then its `patches`; a transparent pixel (alpha 0) leaves the canvas
    /// beneath as it is. GIF durations are whole centiseconds.
    public struct Frame: Sendable, Encodable {
        public var x: Int
        public var y: Int
        public var width: Int
        public var height: Int
        public var fill: [UInt8]
        public var patches: [Patch]
        public var durationMs: Int
        /// GIF's disposal, what happens to the rectangle after the frame was shown: 0 (none
        /// said) and 1 keep it, 2 clears it to transparent, 3 restores the canvas as it was before
        /// the frame. A WebP source is drawn from the canvases this gives.
        public var disposal: Int

        public init(
            x: Int = 0, y: Int = 0, width: Int, height: Int, fill: [UInt8], patches: [Patch] = [],
            durationMs: Int, disposal: Int = 1
        ) {
            (self.x, self.y, self.width, self.height, self.fill) = (x, y, width, height, fill)
            (self.patches, self.durationMs, self.disposal) = (patches, durationMs, disposal)
        }

        enum CodingKeys: String, CodingKey {
            case x, y, width, height, fill, patches, disposal
            case durationMs = "duration"
        }
    }

    public var width: Int
    public var height: Int
    /// How many times the animation plays; 0 is forever (see `AnimationDescription.plays`).
    public var plays: Int
    public var frames: [Frame]

    public init(width: Int, height: Int, plays: Int, frames: [Frame]) {
        (self.width, self.height, self.plays, self.frames) = (width, height, plays, frames)
    }

    /// The durations of the frames, in milliseconds.
    public var durations: [Int] { frames.map(\.durationMs) }

    /// The canvas as each frame shows it, RGBA row by row (`width` × `height` × 4), by the
    /// GIF89a rules as browsers apply them: the canvas starts transparent; a frame's opaque
    /// pixels replace the canvas's; after it is shown, disposal 2 clears its rectangle to
    /// transparent (browsers ignore the background colour), 3 restores the canvas from before it.
    public func composited() -> [[UInt8]] {
        var canvas = [UInt8](repeating: 0, count: width * height * 4)
        var shown: [[UInt8]] = []
        for frame in frames {
            let before = canvas
            for row in 0..<frame.height {
                for column in 0..<frame.width {
                    let (x, y) = (frame.x + column, frame.y + row)
                    guard x < width, y < height else { continue }
                    var colour = frame.fill
                    for patch in frame.patches
                    where (patch.x..<patch.x + patch.width).contains(column)
                        && (patch.y..<patch.y + patch.height).contains(row)
                    {
                        colour = patch.fill
                    }
                    guard colour[3] != 0 else { continue }
                    canvas.replaceSubrange((y * width + x) * 4..<(y * width + x) * 4 + 4, with: colour)
                }
            }
            shown.append(canvas)
            switch frame.disposal {
            case 2:
                for y in frame.y..<min(height, frame.y + frame.height) {
                    for x in frame.x..<min(width, frame.x + frame.width) {
                        canvas.replaceSubrange((y * width + x) * 4..<(y * width + x) * 4 + 4, with: [0, 0, 0, 0])
                    }
                }
            case 3: canvas = before
            default: break
            }
        }
        return shown
    }
}
