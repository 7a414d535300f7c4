extension AnimationSource {
    static let blue: [UInt8] = [0, 0, 255, 255]
    static let red: [UInt8] = [255, 0, 0, 255]
    static let green: [UInt8] = [0, 255, 0, 255]
    static let yellow: [UInt8] = [255, 255, 0, 255]
    static let white: [UInt8] = [255, 255, 255, 255]
    static let magenta: [UInt8] = [255, 0, 255, 255]
    static let clear: [UInt8] = [0, 0, 0, 0]

    /// 160 × 120, six frames whose look depends on every GIF disposal mode, with a transparent
    /// background band and a transparent hole; plays 3 times (NETSCAPE2.0 repeat count 2).
    ///   0: the whole canvas blue, its left quarter transparent (disposal 1: keep);
    ///   1: a red 80 × 60 rectangle in the middle (2: cleared to transparent after, a hole);
    ///   2: green over the top-left 80 × 60 (3: the canvas restored to frame 1's after);
    ///   3: yellow over the bottom-right 80 × 60, over part of the hole (0: kept);
    ///   4: a white 30 × 30 square with a transparent 10 × 10 hole, on the transparent band (1);
    ///   5: magenta over the top-right 40 × 30 (2: cleared after).
    /// Every duration differs. A decoder that ignores disposal shows red in frame 2, green from
    /// frame 3, magenta nowhere cleared; one that disposes to an opaque background fills holes.
    public static let disposalModes = AnimationSource(
        width: 160, height: 120, plays: 3,
        frames: [
            Frame(
                width: 160, height: 120, fill: blue, patches: [Patch(x: 0, y: 0, width: 40, height: 120, fill: clear)],
                durationMs: 100, disposal: 1),
            Frame(x: 40, y: 30, width: 80, height: 60, fill: red, durationMs: 50, disposal: 2),
            Frame(x: 0, y: 0, width: 80, height: 60, fill: green, durationMs: 200, disposal: 3),
            Frame(x: 80, y: 60, width: 80, height: 60, fill: yellow, durationMs: 70, disposal: 0),
            Frame(
                x: 10, y: 10, width: 30, height: 30, fill: white,
                patches: [Patch(x: 10, y: 10, width: 10, height: 10, fill: clear)], durationMs: 120, disposal: 1),
            Frame(x: 120, y: 0, width: 40, height: 30, fill: magenta, durationMs: 30, disposal: 2),
        ])

    /// 96 × 64, opaque, eight frames, plays forever: a two-colour background, then bars that
    /// grow from the left in partial frames (each a rectangle of its own, kept), with delays
    /// from 40 ms to half a second.
    public static let growingBars: AnimationSource = {
        let background = Frame(
            width: 96, height: 64, fill: [0, 128, 128, 255],
            patches: [Patch(x: 48, y: 0, width: 48, height: 64, fill: [255, 140, 0, 255])], durationMs: 40)
        let colours: [[UInt8]] = [
            [200, 30, 40, 255], [30, 60, 200, 255], [250, 230, 80, 255], [90, 20, 120, 255], [20, 160, 60, 255],
            [240, 240, 240, 255], [20, 20, 20, 255],
        ]
        let durations = [80, 120, 160, 60, 60, 100, 500]
        let bars = colours.indices.map { index in
            Frame(
                x: 0, y: index * 8, width: 24 + index * 12, height: 16, fill: colours[index],
                durationMs: durations[index])
        }
        return AnimationSource(width: 96, height: 64, plays: 0, frames: [background] + bars)
    }()
}
