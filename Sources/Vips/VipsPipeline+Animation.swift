internal import CVips
internal import CVipsShims

/// A kept animation (`VipsEncoding.keepsAnimation`): the still pipeline's steps on every frame at
/// once, as one strip of frames (libvips' multi-page images: frames stacked top to bottom, the
/// frame height in `page-height`):
///
///     load every page → resize each to one size   (one lazy libvips `thumbnail`, `n=-1`)
///     → crop every frame to one window   (`cropFrames`, in memory)
///     → sRGB → 8-bit → (in memory) → strip, keeping the frame height, delays and loop → encode
///
/// Never rotated: browsers do not apply EXIF orientation to animations (a GIF has no EXIF; an
/// animated WebP's frames are shown as stored), so neither do we: the frames are cut as stored.
/// (A still of the same WebP, its first frame, is still turned upright, as before.)
extension VipsPipeline {
    /// Loaders whose pages are an animation's frames, every one the canvas size (the loader composes
    /// each frame onto the canvas). A multi-page TIFF or HEIF is a document or a burst whose pages
    /// may differ in size: it keeps its first page.
    static let animatedLoaders: Set<String> = ["gifload_buffer", "webpload_buffer"]

    /// What an encoder needs to write a strip back as an animation: set again after `strip`.
    struct Animation {
        /// One frame's height in the strip.
        var frameHeight: Int
        /// Each frame's display time in milliseconds; nil leaves the encoder's default.
        var delays: [Int]?
        /// How many times it plays, 0 for forever (libvips' "loop").
        var loop: Int
    }

    /// `thumbnail` of an animated GIF or WebP (`source`, opened with `loader`) into an animated GIF
    /// or WebP: every frame `cut`'s size (clamped to a frame), the source's delays and loop count.
    static func animatedThumbnail(
        _ bytes: UnsafeRawBufferPointer, loader: String, source: VipsImageHandle, cut: VipsCut,
        encoding: VipsEncoding, options: VipsOptions, _ deadline: VipsDeadline?
    ) throws(VipsError) -> VipsThumbnail {
        let (ready, frames, frameHeight) = try decodeFrames(
            bytes, loader: loader, source: source, cut: cut, options: options, deadline)
        if deadline?.hasPassed == true { throw .timedOut }
        var format = encoding.format
        if let opaque = encoding.opaqueFormat, opaque.animates, !ready.hasAlpha || isOpaque(ready) {
            format = opaque
        }
        let delays = source.intArray("delay")
        let animation = Animation(
            frameHeight: frameHeight, delays: delays?.count == frames ? delays : nil, loop: source.int("loop") ?? 0)
        let stripped = try strip(ready, keeping: animation)
        // The encoder's cost grows with the frames, not only the output size. cgifsave quantises
        // each frame as its rows arrive and stops cleanly at the kill flag (its dispose frees
        // everything). 8.14.1's webpsave is not watched: when its sink fails it returns without
        // unset, leaking its copy of the image (and with it the whole strip) and its encoder.
        if format == .gif { deadline?.watch(stripped) }
        let buffer = try encode(stripped, format: format, quality: encoding.quality, options: options)
        let written = format == .webp ? buffer.withUnsafeBytes { WebPMetadataStripper.frameCount($0) } : frames
        return VipsThumbnail(
            buffer: buffer, width: stripped.width, height: frameHeight, format: format, frames: written)
    }

    /// Every frame decoded, resized, cut, in sRGB and 8 bits, in memory, as one strip: the decoding
    /// happens here, under `deadline` as for a still (the copy's progress signal; but 8.14's WebP
    /// loader, neither partial nor sequential, decodes every frame into a copy of its own at the
    /// first pixel asked for, before any signal reaches the deadline). A function of its own so
    /// that the lazy pipeline, and with it that copy, is gone before the encoder runs.
    private static func decodeFrames(
        _ bytes: UnsafeRawBufferPointer, loader: String, source: VipsImageHandle, cut: VipsCut,
        options: VipsOptions, _ deadline: VipsDeadline?
    ) throws(VipsError) -> (image: VipsImageHandle, frames: Int, frameHeight: Int) {
        // The header's page height is one frame's (the header loads page 0 alone).
        let box = cut.clamped(toWidth: source.width, height: source.pageHeight)
        let (width, height, size) = target(box, swap: false, inputWidth: source.width, height: source.pageHeight)
        let resized = try resize(
            bytes, loader: loader, width: width, height: height, size: size, options: options, allPages: true,
            deadline)
        let frameHeight = resized.pageHeight
        guard frameHeight > 0, resized.height % frameHeight == 0 else {
            throw .decodeFailed("frames of unequal height")
        }
        let cropped = try cropFrames(resized, frameHeight: frameHeight, to: box, deadline)
        let eightBit = try toEightBit(toSRGB(cropped.image))
        let ready = try materialize(eightBit, decodeError: true, deadline)
        return (ready, resized.height / frameHeight, cropped.frameHeight)
    }

    /// Crops every frame of `strip` to a cover `box`, all to the same window: the centre, or for
    /// attention the window `vips_smartcrop` picks on the first frame (8.14 returns the centre of
    /// attention as `attention_x`/`attention_y`; the window around it is computed as smartcrop
    /// does, so the first frame is cropped exactly as a still of it would be). One window for all
    /// frames: a window that moved from frame to frame would shake the animation. After a copy to
    /// memory (under `deadline`), like a still's crop. Nothing to cut, no copy.
    private static func cropFrames(
        _ strip: VipsImageHandle, frameHeight: Int, to box: VipsCut, _ deadline: VipsDeadline?
    ) throws(VipsError) -> (image: VipsImageHandle, frameHeight: Int) {
        guard case .cover(let boxWidth, let boxHeight, let kept) = box else { return (strip, frameHeight) }
        let (width, height) = (min(boxWidth, strip.width), min(boxHeight, frameHeight))
        guard width < strip.width || height < frameHeight else { return (strip, frameHeight) }
        let memory = try materialize(strip, decodeError: true, deadline)
        var (left, top) = ((memory.width - width) / 2, (frameHeight - height) / 2)
        if kept == .attention {
            guard
                let first = VipsImageHandle.make({
                    cvips_extract_area(memory.pointer, $0, 0, 0, Int32(memory.width), Int32(frameHeight))
                })
            else { throw .decodeFailed(VipsError.takeErrorText()) }
            var (x, y): (Int32, Int32) = (0, 0)
            guard cvips_smartcrop_attention(first.pointer, Int32(width), Int32(height), &x, &y) == 0 else {
                throw .decodeFailed(VipsError.takeErrorText())
            }
            // smartcrop.c: VIPS_CLIP(0, attention - size / 2, extent - size).
            left = max(0, min(Int(x) - width / 2, memory.width - width))
            top = max(0, min(Int(y) - height / 2, frameHeight - height))
        }
        guard
            let cropped = VipsImageHandle.make({
                cvips_crop_pages(
                    memory.pointer, $0, Int32(left), Int32(top), Int32(width), Int32(height), Int32(frameHeight))
            })
        else { throw .decodeFailed(VipsError.takeErrorText()) }
        return (cropped, height)
    }
}
