/// What the pipeline writes in a disk entry's `extra` to make a cache value of its body again
/// after a restart: for a variant or an info document, its format, size, frames, the limit that
/// made it a still and the fingerprint its ETag is; for an original, only its kind.
///
/// Binary, fixed layout (little-endian), then the animation tag as UTF-8:
/// `version(1) kind(1) format(1) firstFrame(1) width(4) height(4) frames(4) fingerprint(8) tag…`.
/// Decoded on every disk hit, so it is a few loads, not a parse: a text form (`k=variant;w=300;…`)
/// cost 11 % of a disk hit's CPU in a profile of `bench/disk.sh`. Read defensively all the same —
/// a record that is not exactly one of this version makes its entry unusable (removed), never a
/// crash.
struct DiskRecord: Equatable {
    enum Kind: UInt8 { case original = 1, variant = 2, info = 3 }

    static let version: UInt8 = 2
    static let fixedBytes = 24

    var kind: Kind
    var format: OutputFormat?
    var width = 0
    var height = 0
    var frames = 1
    var firstFrameOnly: FirstFrameReason?
    var fingerprint: UInt64 = 0
    /// The settings that decide whether an animated source stays animated
    /// (`ThumbnailPipeline.animationTag`) when the variant was made.
    var animationTag = ""

    /// Whether the variant's content depends on the animation settings: it is animated, or an
    /// animation made a still by a limit. A still of a still source (or of an animation asked
    /// in a format that cannot animate) is the same under any of them.
    var dependsOnAnimationLimits: Bool { frames > 1 || firstFrameOnly != nil }

    static func original() -> DiskRecord { DiskRecord(kind: .original) }

    init(kind: Kind) { self.kind = kind }

    init(_ image: EncodedImage, fingerprint: UInt64, kind: Kind, animationTag: String) {
        self.kind = kind
        self.format = image.format
        self.width = image.width
        self.height = image.height
        self.frames = image.frames
        self.firstFrameOnly = image.firstFrameOnly
        self.fingerprint = fingerprint
        self.animationTag = animationTag
    }

    // Codes written to disk: fixed here, never an enum's declaration order.
    private static let formats: [OutputFormat] = [.jpeg, .png, .webp, .avif, .gif]
    private static let reasons: [FirstFrameReason] = [.maxFrames, .maxPixels, .workBytes]

    var encoded: [UInt8] {
        var bytes: [UInt8] = [Self.version, kind.rawValue]
        bytes.append(format.flatMap { Self.formats.firstIndex(of: $0) }.map { UInt8($0 + 1) } ?? 0)
        bytes.append(firstFrameOnly.flatMap { Self.reasons.firstIndex(of: $0) }.map { UInt8($0 + 1) } ?? 0)
        for value in [UInt32(clamping: width), UInt32(clamping: height), UInt32(clamping: frames)] {
            withUnsafeBytes(of: value.littleEndian) { bytes += $0 }
        }
        withUnsafeBytes(of: fingerprint.littleEndian) { bytes += $0 }
        bytes += animationTag.utf8
        return bytes
    }

    /// The record in `bytes`, or nil when they are not one this version wrote.
    init?(decoding bytes: [UInt8]) {
        guard bytes.count >= Self.fixedBytes, bytes[0] == Self.version, let kind = Kind(rawValue: bytes[1]) else {
            return nil
        }
        self.kind = kind
        guard kind != .original else { return }
        func word(_ offset: Int) -> Int {
            Int(
                UInt32(bytes[offset]) | UInt32(bytes[offset + 1]) << 8 | UInt32(bytes[offset + 2]) << 16
                    | UInt32(bytes[offset + 3]) << 24)
        }
        (width, height, frames) = (word(4), word(8), word(12))
        fingerprint = UInt64(word(16)) | UInt64(word(20)) << 32
        guard width > 0, height > 0, frames >= 1 else { return nil }
        let formatCode = Int(bytes[2])
        let reasonCode = Int(bytes[3])
        guard formatCode <= Self.formats.count, reasonCode <= Self.reasons.count else { return nil }
        format = formatCode == 0 ? nil : Self.formats[formatCode - 1]
        firstFrameOnly = reasonCode == 0 ? nil : Self.reasons[reasonCode - 1]
        // A thumbnail has a format; an info document has none.
        guard (kind == .variant) == (format != nil) else { return nil }
        guard let tag = String(validating: bytes[Self.fixedBytes...], as: UTF8.self) else { return nil }
        animationTag = tag
    }
}
