/// What the pipeline writes in a disk entry's `extra` to make a cache value of its body again
/// after a restart: for a variant or an info document, its format, size, frames, the limit that
/// made it a still and the fingerprint its ETag is; for an original, only its kind.
///
/// Text (`v1;k=variant;f=webp;w=300;…`): a few dozen bytes, readable with `xxd` when an operator
/// looks into the folder, and parsed defensively — a record that does not parse makes its entry
/// unusable (removed), never a crash.
struct DiskRecord: Equatable {
    enum Kind: String { case original, variant, info }

    var kind: Kind
    var format: OutputFormat?
    var width = 0
    var height = 0
    var frames = 1
    var firstFrameOnly: FirstFrameReason?
    var fingerprint: UInt64 = 0
    /// The settings that decide whether an animated source stays animated
    /// (`ThumbnailPipeline.Limits.animationTag`) when the variant was made.
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

    var encoded: [UInt8] {
        let fields = [
            "v1", "k=\(kind.rawValue)", "f=\(format?.rawValue ?? "")", "w=\(width)", "h=\(height)", "n=\(frames)",
            "ff=\(firstFrameOnly?.rawValue ?? "")", "fp=\(String(fingerprint, radix: 16))", "t=\(animationTag)",
        ]
        return Array(fields.joined(separator: ";").utf8)
    }

    /// The record in `bytes`, or nil when they are not one this version wrote.
    init?(decoding bytes: [UInt8]) {
        let fields = String(decoding: bytes, as: UTF8.self).split(separator: ";", omittingEmptySubsequences: false)
        guard fields.first == "v1" else { return nil }
        var values: [Substring: Substring] = [:]
        for field in fields.dropFirst() {
            guard let equals = field.firstIndex(of: "=") else { return nil }
            values[field[..<equals]] = field[field.index(after: equals)...]
        }
        guard let kindText = values["k"], let kind = Kind(rawValue: String(kindText)) else { return nil }
        self.kind = kind
        guard kind != .original else { return }
        guard let width = values["w"].flatMap({ Int($0) }), let height = values["h"].flatMap({ Int($0) }),
            let frames = values["n"].flatMap({ Int($0) }),
            let fingerprint = values["fp"].flatMap({ UInt64($0, radix: 16) }),
            width > 0, height > 0, frames >= 1
        else { return nil }
        self.width = width
        self.height = height
        self.frames = frames
        self.fingerprint = fingerprint
        self.animationTag = String(values["t"] ?? "")
        let format = values["f"] ?? ""
        if !format.isEmpty {
            guard let parsed = OutputFormat(rawValue: String(format)) else { return nil }
            self.format = parsed
        }
        // A thumbnail has a format; an info document has none.
        guard (kind == .variant) == (self.format != nil) else { return nil }
        let reason = values["ff"] ?? ""
        if !reason.isEmpty {
            guard let parsed = FirstFrameReason(rawValue: String(reason)) else { return nil }
            self.firstFrameOnly = parsed
        }
    }
}
