internal import CVips
internal import CVipsShims

/// libvips behind a small, safe surface: a header probe, the thumbnail pipeline (from encoded bytes
/// or from a decoded copy) and the decoded copies themselves. No policy lives here: the caller
/// passes `VipsOptions` (which loaders, how strict, how each encoder is tuned) and the exact output
/// size.
public enum Vips {
    /// Idempotent and thread-safe. Starts libvips for a server: one vips thread per call (the
    /// service runs its own worker pool), no operation cache, untrusted loaders (SVG, PDF, magick,
    /// ...) blocked.
    public static func initialize() {
        _ = started
    }

    private static let started: Bool = {
        guard cvips_init_once("thumbd") == 0 else {
            fatalError("vips_init failed: \(VipsError.takeErrorText())")
        }
        vips_concurrency_set(1)
        vips_cache_set_max(0)
        vips_cache_set_max_mem(0)
        vips_cache_set_max_files(0)
        vips_block_untrusted_set(1)
        return true
    }()

    /// Whether libvips runs Orc-compiled (run-time SIMD) code: with liborc 0.4.34 or later, or
    /// with an older one whose compile and free calls are serialised (`orcIsSerialised`), since
    /// 0.4.33 corrupts the heap when two threads compile at once (`cvips_init_once`).
    package static var usesOrc: Bool {
        initialize()
        return vips_vector_isenabled() != 0
    }

    /// The loaded liborc's version, nil when libvips has none.
    package static var orcVersion: String? { cvips_orc_version().map { String(cString: $0) } }

    /// Whether libvips' calls to `orc_program_compile` and `orc_program_free` go through
    /// CVipsShims' wrappers, which take one lock around each (the executable exports them).
    package static var orcIsSerialised: Bool { cvips_orc_is_serialised() != 0 }

    /// Whether a liborc of `version` is safe to use from several threads (0.4.34 and later).
    package static func orcIsSafe(_ version: String) -> Bool { cvips_orc_is_safe(version) != 0 }

    /// The most memory libvips' own allocator (`vips_tracked_malloc`: pixel buffers, line caches)
    /// has held at once since start, for `thumbd-bench memory`. It does not see what the codecs
    /// allocate themselves (libjpeg's coefficient arrays), so the bench reads the peak RSS as well.
    /// `public` for thumbd-bench only (bench/Package.swift, a package of its own).
    public static func trackedMemoryHighWater() -> Int {
        initialize()
        return Int(vips_tracked_get_mem_highwater())
    }

    /// What libvips' own allocator holds now, the most it has held since start, and its live
    /// allocations (`vips_tracked_get_mem`, `_mem_highwater`, `_allocs`), for `/metrics`. Pixel
    /// buffers and line caches only: the codecs' own allocations are not in it (see above).
    public static var trackedMemory: VipsTrackedMemory {
        initialize()
        return VipsTrackedMemory(
            bytes: Int(vips_tracked_get_mem()), highWater: Int(vips_tracked_get_mem_highwater()),
            allocations: Int(vips_tracked_get_allocs()))
    }

    /// Number of live libvips objects (images, regions, operations, ...) in the process, for the
    /// leak tests (TestSupport's `Fixtures.liveVipsObjectCount`): compared before and after many
    /// calls, it catches a missing unref. `package`: a count of everything alive process-wide is
    /// only meaningful to a test.
    package static func liveObjectCount() -> Int {
        initialize()
        var count = 0
        withUnsafeMutablePointer(to: &count) { counter in
            _ = vips_object_map(
                { _, counter, _ in
                    counter!.assumingMemoryBound(to: Int.self).pointee += 1
                    return nil
                }, counter, nil)
        }
        return count
    }

    /// The libvips version, e.g. "8.14.1".
    public static var version: String {
        initialize()
        return "\(vips_version(0)).\(vips_version(1)).\(vips_version(2))"
    }

    /// Reads only the header: no pixels are decoded. The loader is identified from the first bytes
    /// and checked against `options.allowedLoaders` before the image is opened with it. An animated
    /// GIF's or WebP's loop count and frame delays come from its header too (the GIF loader scans
    /// the frames' headers, the WebP one the demuxer's frame list; neither decodes a frame).
    public static func header(of bytes: UnsafeRawBufferPointer, options: VipsOptions) throws(VipsError) -> VipsHeader {
        initialize()
        let loader = try VipsPipeline.checkLoader(bytes, options: options)
        let image = try VipsPipeline.open(bytes, loader: loader)
        return VipsHeader(
            loader: loader, width: image.width, height: image.pageHeight, pageCount: image.pageCount,
            bands: image.bands, hasAlpha: image.hasAlpha, orientation: image.orientation,
            bytesPerSample: image.bytesPerSample, interlaced: image.interlaced,
            compression: image.string("heif-compression"), loop: image.int("loop"),
            delays: image.intArray("delay") ?? [])
    }

    /// A thumbnail of exactly `cut`'s size (clamped to the input: never upscaled): first page, EXIF
    /// orientation applied, sRGB (honouring an embedded ICC profile; CMYK converted; greyscale stays
    /// greyscale), 8-bit, alpha flattened onto white for JPEG, every metadata field stripped. Safe to
    /// call concurrently, also on one decoded copy.
    ///
    /// With `encoding.keepsAnimation`, an animated GIF or WebP (encoded bytes) into GIF or WebP keeps
    /// every frame instead: each frame `cut`'s size (a cover cut crops every frame to the same
    /// window), not rotated (browsers do not apply EXIF orientation to animations), and the only
    /// metadata kept are the frame delays and the loop count. `VipsThumbnail.frames` says how many.
    ///
    /// `timeLimit`: once it has passed, the decoding and resizing stop (JPEG, PNG and TIFF within a
    /// read of their bytes; the rest at the next progress signal of libvips' copy to memory), and
    /// so does the call before it encodes; it then throws `.timedOut`. The header read and the
    /// encoder are not interrupted (`VipsDeadline` says why), except an animated GIF's encoder,
    /// which stops at its next frame's rows. Nil: no limit.
    public static func thumbnail(
        of input: VipsInput, cut: VipsCut, encoding: VipsEncoding, options: VipsOptions, timeLimit: Duration? = nil
    ) throws(VipsError) -> VipsThumbnail {
        initialize()
        return try VipsPipeline.thumbnail(input, cut: cut, encoding: encoding, options: options, timeLimit: timeLimit)
    }

    /// A decoded copy of the first page fitting inside `width` × `height` (never upscaled; decoded
    /// with shrink-on-load where the format has it), oriented, sRGB or greyscale, 8-bit, in memory,
    /// an unused alpha band dropped. Any number of thumbnails can then be cut from it. `timeLimit`
    /// as for `thumbnail`.
    public static func decode(
        of bytes: UnsafeRawBufferPointer, fittingWidth width: Int, height: Int, options: VipsOptions,
        timeLimit: Duration? = nil
    ) throws(VipsError) -> VipsDecodedImage {
        initialize()
        return try VipsPipeline.decode(bytes, width: width, height: height, options: options, timeLimit: timeLimit)
    }
}
