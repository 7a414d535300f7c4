internal import CVips
internal import CVipsShims

/// The one production pipeline, written once as its steps in order:
///
///     header check → decode with shrink-on-load → resize   (`shrink`, one lazy libvips `thumbnail`)
///     → orient → crop   (`orientAndCrop`, in memory)
///     → sRGB → 8-bit → (in memory) → flatten → strip → encode
///
/// The first three are one libvips `thumbnail` call on purpose: it picks the shrink-on-load factor
/// (JPEG decodes at 1/2, 1/4, 1/8 for about the cost of entropy decoding; WebP scales), and
/// streams the decode through the resize. That is what the plain-libvips floor in `bench/` does,
/// so a miss costs what libvips needs. The same call on a decoded copy (`vips_thumbnail_image`)
/// makes a new size from memory. Every later step runs on the output-sized image.
///
/// Rotating and cropping are ours, not the `thumbnail` call's: 8.14's thumbnail does both inside
/// the call after copying the whole resized image to memory (thumbnail.c), which is where all the
/// decoding happens, out of reach of a time limit. Here that same copy is `materialize`, watched by
/// the call's `VipsDeadline`, and the rotation and crop that follow are the ones thumbnail makes
/// (vips_autorot, vips_smartcrop), so the pixels are the same.
///
/// A kept animation (`VipsEncoding.keepsAnimation`) takes the same steps on all its frames at once
/// (`animatedThumbnail`, VipsPipeline+Animation.swift).
enum VipsPipeline {
    /// Libvips' largest coordinate (`VIPS_MAX_COORD`): the box height for "fit the width only".
    static let unboundedSide = 10_000_000

    static func thumbnail(
        _ input: VipsInput, cut: VipsCut, encoding: VipsEncoding, options: VipsOptions, timeLimit: Duration?
    ) throws(VipsError) -> VipsThumbnail {
        let deadline = timeLimit.map(VipsDeadline.init)
        return try reportingTimeOut(deadline) { () throws(VipsError) in
            try validate(cut, encoding)
            let shrunk: (image: VipsImageHandle, box: VipsCut)
            switch input {
            case .encoded(let bytes):
                let loader = try checkLoader(bytes, options: options)
                let source = try open(bytes, loader: loader)
                if encoding.keepsAnimation, encoding.format.animates, animatedLoaders.contains(loader),
                    source.pageCount > 1
                {
                    return try animatedThumbnail(
                        bytes, loader: loader, source: source, cut: cut, encoding: encoding, options: options,
                        deadline)
                }
                shrunk = try shrink(bytes, loader: loader, source: source, to: cut, options: options, deadline)
            case .decoded(let decoded):
                shrunk = try shrink(decoded, to: cut)
            }
            let cropped = try orientAndCrop(shrunk.image, to: shrunk.box, decodeError: input.isEncoded, deadline)
            let srgb = try toSRGB(cropped)
            let eightBit = try toEightBit(srgb)
            // Decode now, into the small result: a decode failure must surface here, not inside an
            // encoder (8.14's webpsave leaks when its input fails), and the opacity check reads pixels.
            let ready = try materialize(eightBit, decodeError: input.isEncoded, deadline)
            if deadline?.hasPassed == true { throw .timedOut }
            var format = encoding.format
            if let opaque = encoding.opaqueFormat, !ready.hasAlpha || isOpaque(ready) { format = opaque }
            let flat = try flatten(ready, for: format)
            let stripped = try strip(flat)
            let buffer = try encode(stripped, format: format, quality: encoding.quality, options: options)
            return VipsThumbnail(
                buffer: buffer, width: stripped.width, height: stripped.height, format: format, frames: 1)
        }
    }

    static func decode(
        _ bytes: UnsafeRawBufferPointer, width: Int, height: Int, options: VipsOptions, timeLimit: Duration?
    ) throws(VipsError) -> VipsDecodedImage {
        guard width >= 1, height >= 1 else { throw .invalidArgument("box \(width)x\(height)") }
        let deadline = timeLimit.map(VipsDeadline.init)
        return try reportingTimeOut(deadline) { () throws(VipsError) in
            let loader = try checkLoader(bytes, options: options)
            let source = try open(bytes, loader: loader)
            // The box in the stored orientation: the thumbnail does not rotate (see above).
            let box = (min(width, unboundedSide), min(height, unboundedSide))
            let stored = source.orientationSwapsAxes ? (box.1, box.0) : box
            let shrunk = try resize(
                bytes, loader: loader, width: stored.0, height: stored.1, size: VIPS_SIZE_DOWN, options: options,
                deadline)
            let upright = try orientAndCrop(shrunk, to: nil, decodeError: true, deadline)
            let eightBit = try toEightBit(toSRGB(upright))
            // The one copy into memory (two for a rotated source, as 8.14's thumbnail made); one
            // more only when an unused alpha band is dropped (rare: GIFs, opaque PNGs with alpha),
            // worth it because the copy is kept and cut from many times.
            let memory = try materialize(eightBit, decodeError: true, deadline)
            // A JPEG loader told not to fail (`fail_on=none`) ends a failed read as a truncated
            // file, in grey: not a copy to keep.
            if deadline?.hasPassed == true { throw .timedOut }
            guard memory.hasAlpha, isOpaque(memory) else { return VipsDecodedImage(handle: memory) }
            guard
                let colour = VipsImageHandle.make({
                    cvips_extract_band(memory.pointer, $0, 0, Int32(memory.bands - 1))
                })
            else {
                vips_error_clear()
                return VipsDecodedImage(handle: memory)
            }
            return VipsDecodedImage(handle: try materialize(colour, decodeError: true, nil))
        }
    }

    /// Runs `body`; a decode or encode failure after the deadline passed is the deadline's doing
    /// (libvips reports a killed evaluation as an ordinary error: "killed for image ...").
    private static func reportingTimeOut<T>(_ deadline: VipsDeadline?, _ body: () throws(VipsError) -> T)
        throws(VipsError) -> T
    {
        do {
            return try body()
        } catch {
            guard deadline?.hasPassed == true else { throw error }
            switch error {
            case .decodeFailed, .encodeFailed: throw .timedOut
            default: throw error
            }
        }
    }

    // MARK: - Steps

    private static func validate(_ cut: VipsCut, _ encoding: VipsEncoding) throws(VipsError) {
        guard (1...unboundedSide).contains(cut.width), (1...unboundedSide).contains(cut.height) else {
            throw .invalidArgument("size \(cut.width)x\(cut.height)")
        }
        guard (1...100).contains(encoding.quality) else {
            throw .invalidArgument("quality \(encoding.quality) is not in 1...100")
        }
    }

    /// Header check, then decode with shrink-on-load and resize as one lazy libvips `thumbnail`,
    /// in the stored orientation and uncropped: `force` for an exact size (each axis scaled on
    /// its own); for a cover, `down` to the one side that binds (the other unbounded), which is
    /// the scale 8.14's thumbnail picks for a crop. The cut is clamped to the oriented input first,
    /// so nothing upscales; `box` is that clamped cut, for `orientAndCrop`.
    /// `source` is the bytes opened with `loader` (`checkLoader`, `open`).
    private static func shrink(
        _ bytes: UnsafeRawBufferPointer, loader: String, source: VipsImageHandle, to cut: VipsCut,
        options: VipsOptions, _ deadline: VipsDeadline?
    ) throws(VipsError) -> (image: VipsImageHandle, box: VipsCut) {
        let swap = source.orientationSwapsAxes
        let box = cut.clamped(
            toWidth: swap ? source.pageHeight : source.width, height: swap ? source.width : source.pageHeight)
        let (width, height, size) = target(box, swap: swap, inputWidth: source.width, height: source.pageHeight)
        let image = try resize(
            bytes, loader: loader, width: width, height: height, size: size, options: options, deadline)
        return (image, box)
    }

    /// `shrink` of a decoded copy: the same resize from memory.
    private static func shrink(_ decoded: VipsDecodedImage, to cut: VipsCut) throws(VipsError) -> (
        image: VipsImageHandle, box: VipsCut
    ) {
        guard let copy = decoded.makeImage() else { throw .encodeFailed(VipsError.takeErrorText()) }
        let box = cut.clamped(toWidth: copy.width, height: copy.height)
        let (width, height, size) = target(box, swap: false, inputWidth: copy.width, height: copy.height)
        guard
            let image = VipsImageHandle.make({
                cvips_thumbnail_image(copy.pointer, $0, Int32(width), Int32(height), size)
            })
        else { throw .encodeFailed(VipsError.takeErrorText()) }
        return (image, box)
    }

    /// The size and mode `thumbnail` resizes a stored `inputWidth` x `height` input to for `box`
    /// (oriented): the box in the stored orientation; for a cover only its side with the smaller
    /// shrink, the other unbounded, so that "fit inside" scales by exactly that shrink (thumbnail's
    /// own crop mode uses the smaller of the two, `vips_thumbnail_calculate_shrink`).
    static func target(_ box: VipsCut, swap: Bool, inputWidth: Int, height inputHeight: Int) -> (
        width: Int, height: Int, size: VipsSize
    ) {
        let (width, height) = swap ? (box.height, box.width) : (box.width, box.height)
        guard case .cover = box else { return (width, height, VIPS_SIZE_FORCE) }
        // inputWidth / width < inputHeight / height: the width binds.
        if inputWidth * height < inputHeight * width { return (width, unboundedSide, VIPS_SIZE_DOWN) }
        return (unboundedSide, height, VIPS_SIZE_DOWN)
    }

    /// Turns `image` upright (its EXIF orientation) and crops it to a cover `box`, as 8.14's
    /// thumbnail would have inside its call: after a copy to memory (sequential decoding cannot
    /// turn or crop-search), which runs the decode, under `deadline`. Nothing to do, no copy.
    private static func orientAndCrop(
        _ image: VipsImageHandle, to box: VipsCut?, decodeError: Bool, _ deadline: VipsDeadline?
    ) throws(VipsError) -> VipsImageHandle {
        let turn = image.orientation != 1
        var crop: (width: Int, height: Int, interesting: VipsInteresting)?
        if case .cover(let width, let height, let kept) = box {
            crop = (width, height, kept == .centre ? VIPS_INTERESTING_CENTRE : VIPS_INTERESTING_ATTENTION)
        }
        guard turn || crop != nil else { return image }
        var result = try materialize(image, decodeError: decodeError, deadline)
        if turn {
            guard let upright = VipsImageHandle.make({ cvips_autorot(result.pointer, $0) }) else {
                throw .decodeFailed(VipsError.takeErrorText())
            }
            result = upright
        }
        if let crop {
            let (width, height) = (min(crop.width, result.width), min(crop.height, result.height))
            guard
                let cropped = VipsImageHandle.make({
                    cvips_smartcrop(result.pointer, $0, Int32(width), Int32(height), crop.interesting)
                })
            else { throw .decodeFailed(VipsError.takeErrorText()) }
            result = cropped
        }
        return result
    }

    /// 8.14's thumbnail converts to sRGB with `vips_colourspace`, which ignores an embedded RGB
    /// profile (Display P3, Adobe RGB, ...) and leaves it attached; stripping it on save would then
    /// shift the colours. So transform such images to sRGB with the profile. CMYK needs nothing:
    /// `colourspace` already imported it with its embedded (or the built-in) CMYK profile, which
    /// stays attached but is stripped on save. Greyscale stays greyscale.
    ///
    /// The intent is one the profile supports as an input: 8.14's `icc_transform` checks the one
    /// it is given (relative by default) and, if the profile lacks it, silently imports with its
    /// built-in sRGB instead, i.e. leaves the pixels unconverted. A profile with only perceptual
    /// tables (A2B0: jpegli's XYB JPEGs, many LUT-based camera and printer profiles) came out with a
    /// strong colour cast. Relative first (what every matrix profile gets, as before), then
    /// perceptual, then saturation (absolute needs the same A2B1 table as relative).
    ///
    /// A profile lcms2 cannot parse, or that supports no intent as an input, is ignored and the
    /// pixels are taken as sRGB, as browsers do with a broken profile. A transform that fails once
    /// a usable intent is chosen throws (the service answers 422): never a silent skip.
    static func toSRGB(_ image: VipsImageHandle) throws(VipsError) -> VipsImageHandle {
        guard image.bands >= 3, let profile = image.iccProfile, image.iccProfileColourSpace == "RGB " else {
            return image
        }
        let supported = cvips_icc_input_intents(profile.baseAddress, profile.count)
        let intents = [VIPS_INTENT_RELATIVE, VIPS_INTENT_PERCEPTUAL, VIPS_INTENT_SATURATION]
        guard supported > 0, let intent = intents.first(where: { supported & (1 << $0.rawValue) != 0 }) else {
            return image
        }
        guard let converted = VipsImageHandle.make({ cvips_icc_transform(image.pointer, $0, "srgb", intent) }) else {
            throw .decodeFailed(VipsError.takeErrorText())
        }
        return converted
    }

    /// sRGB or greyscale (with alpha, if any) in 8 bits per band: what every encoder takes and what
    /// a decoded copy stores. 16-bit PNGs and TIFFs come down here.
    static func toEightBit(_ image: VipsImageHandle) throws(VipsError) -> VipsImageHandle {
        let format = image.pointer.pointee.BandFmt
        let type = image.pointer.pointee.Type
        let grey = image.bands <= 2
        let target = grey ? VIPS_INTERPRETATION_B_W : VIPS_INTERPRETATION_sRGB
        if format == VIPS_FORMAT_UCHAR && (type == target || (!grey && type == VIPS_INTERPRETATION_RGB)) {
            return image
        }
        guard let converted = VipsImageHandle.make({ cvips_colourspace(image.pointer, $0, target) }) else {
            throw .decodeFailed(VipsError.takeErrorText())
        }
        if converted.pointer.pointee.BandFmt == VIPS_FORMAT_UCHAR { return converted }
        guard let cast = VipsImageHandle.make({ cvips_cast(converted.pointer, $0, VIPS_FORMAT_UCHAR) }) else {
            throw .decodeFailed(VipsError.takeErrorText())
        }
        return cast
    }

    /// Runs the lazy pipeline into memory: where the decoding and resizing happen, so where a
    /// deadline stops them (`VipsDeadline.watch`).
    static func materialize(_ image: VipsImageHandle, decodeError: Bool, _ deadline: VipsDeadline?)
        throws(VipsError) -> VipsImageHandle
    {
        deadline?.watch(image)
        guard let memory = vips_image_copy_memory(image.pointer) else {
            let text = VipsError.takeErrorText()
            throw decodeError ? .decodeFailed(text) : .encodeFailed(text)
        }
        return VipsImageHandle(taking: memory)
    }
}

extension VipsInput {
    var isEncoded: Bool {
        if case .encoded = self { return true }
        return false
    }
}
