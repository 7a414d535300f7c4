/// The decode working set of one job, estimated from the header before any pixel is decoded: what
/// the work budget (`--work-bytes`) charges a job before it may run. It may overestimate; it must
/// not underestimate by more than 10 % on the bench corpus (`thumbd-bench memory` measures each
/// image; the figures are in bench/results/decode-memory.md).
///
/// The model follows what libvips 8.14 does in `vips_thumbnail`:
/// - **Shrink-on-load.** JPEG decodes at 1/2, 1/4 or 1/8 when the output is at least 4, 8 or 16
///   times smaller on its tighter axis (libvips leaves a factor of two for the final resize);
///   WebP is modelled the same way (libwebp scales while decoding); PNG, GIF, TIFF and HEIF decode
///   at full size.
/// - **What the decoder holds whole.** A progressive JPEG keeps every DCT coefficient of the full
///   image (2 bytes per sample; every component counted at full resolution, so 4:2:0 sources are
///   overestimated) whatever the shrink; an interlaced PNG keeps the whole image; WebP, GIF, HEIF
///   and TIFF are held whole too (libvips' loaders for them decode a frame into memory).
/// - **What streams.** Everything else flows through libvips' line caches: a band of rows of the
///   decoded width (`streamedRows`), in float while resizing; with alpha about three times as many.
/// - **The output**, materialised once, and a fixed allowance for libvips' and the codec's own state.
/// - **An animation kept animated** (`SourceInfo.isAnimated` with every frame decoded; measured
///   with libvips 8.14, one job in a fresh process, its RSS rise and libvips' tracked high-water
///   mark; AnimationPlanTests holds the estimates above those figures): the frames are one tall strip, so the
///   resize streams as for a still and the GIF decoder holds one canvas; but the output strip is
///   kept whole, 8-bit RGBA, frames × the output (for a cover, the uncropped strip as well, while
///   it is cropped); WebP's loader decodes every frame into a copy of its own first (at the
///   canvas size: libwebp's animation encoder writes sub-rectangle frames, and then the loader
///   cannot shrink on load); and the GIF encoder's buffer grows by doubling (a quarter of the
///   strip allowed). A 100-frame 500×500 GIF to 400 px measured 79 MiB (estimate 95), a
///   783-frame 640×421 GIF to 320 px 214 MiB (estimate 270).
public enum DecodeMemory {
    /// libvips' and the codecs' own state per job (tables, thread buffers, the encoder).
    public static let fixedBytes = 4 << 20
    /// Rows of the decoded image, in float, that libvips' streaming resize holds in its line caches
    /// (measured: about 330 rows for an opaque source, about 1000 with alpha, whose premultiplied
    /// copy and its undoing each keep their own caches; rounded up).
    public static func streamedRows(hasAlpha: Bool) -> Int { hasAlpha ? 1100 : 360 }

    /// The shrink-on-load factor libvips will decode `info` with for an output of `width` × `height`
    /// (oriented, as `SourceInfo` is).
    public static func loadShrink(_ info: SourceInfo, width: Int, height: Int) -> Int {
        guard info.format == .jpeg || info.format == .webp else { return 1 }
        let shrink = min(Double(info.width) / Double(max(1, width)), Double(info.height) / Double(max(1, height)))
        switch shrink {
        case 16...: return 8
        case 8...: return 4
        case 4...: return 2
        default: return 1
        }
    }

    /// Bytes a first size (or a reusable copy, whose output is the copy's box) of `info` at
    /// `width` × `height` needs while it is made. `uncropped`: a cover's resized size before its
    /// crop (an animation keeps that strip too).
    public static func estimate(
        _ info: SourceInfo, width: Int, height: Int, uncropped: (width: Int, height: Int)? = nil
    ) -> Int {
        if info.isAnimated { return animation(info, width: width, height: height, uncropped: uncropped) }
        let bands = max(1, info.bands)
        let sample = max(1, info.bytesPerSample)
        let pixels = Double(info.width) * Double(info.height)
        let full = pixels * Double(bands * sample)
        let shrink = Double(loadShrink(info, width: width, height: height))
        let decodedWidth = (Double(max(info.width, info.height)) / shrink).rounded(.up)
        let decodedPixels = (Double(info.width) / shrink).rounded(.up) * (Double(info.height) / shrink).rounded(.up)
        var held = 0.0
        switch info.format {
        case .jpeg: held = info.interlaced ? pixels * Double(bands) * 2 : 0
        case .png: held = info.interlaced ? full : 0
        case .webp: held = decodedPixels * Double(bands)
        case .gif: held = pixels * 4 * 2  // the frame and the one it is drawn over, RGBA
        case .heif, .tiff: held = full * 2  // the codec's buffer and libvips' copy of it
        }
        // Float while resizing: 4 bytes a band sample.
        let streamed = Double(streamedRows(hasAlpha: info.hasAlpha)) * decodedWidth * Double(bands) * 4
        let output = Double(width) * Double(height) * Double(bands) * 4
        return clamped(Double(fixedBytes) + held + streamed + output)
    }

    /// An animation kept animated (see the type's notes): RGBA throughout.
    private static func animation(
        _ info: SourceInfo, width: Int, height: Int, uncropped: (width: Int, height: Int)?
    ) -> Int {
        let frames = Double(info.pageCount)
        let canvas = Double(info.width) * Double(info.height) * 4
        let strip = Double(width) * Double(height) * 4 * frames
        let uncroppedStrip = uncropped.map { Double($0.width) * Double($0.height) * 4 * frames } ?? 0
        let held = info.format == .webp ? canvas * frames : canvas * 2
        let streamed = Double(streamedRows(hasAlpha: true)) * Double(max(info.width, info.height)) * 4 * 4
        return clamped(Double(fixedBytes) + held + streamed + strip + uncroppedStrip + strip / 4)
    }

    private static func clamped(_ bytes: Double) -> Int { bytes >= Double(Int.max) ? .max : Int(bytes) }
}
