/// What the cache holds under a key: the bytes plus what is needed to answer from them without
/// touching them again (media type, strong ETag).
public struct CachedImage: Sendable {
    public enum Kind: Sendable, Equatable {
        /// A source as fetched.
        case original
        /// An encoded thumbnail.
        case variant(OutputFormat, width: Int, height: Int)
        /// A decoded copy of a source (its pixels are `bytes`).
        case decoded(DecodedSource)

        public static func == (a: Kind, b: Kind) -> Bool {
            switch (a, b) {
            case (.original, .original): true
            case (.variant(let f1, let w1, let h1), .variant(let f2, let w2, let h2)): f1 == f2 && w1 == w2 && h1 == h2
            case (.decoded(let d1), .decoded(let d2)): d1.pixels === d2.pixels
            default: false
            }
        }
    }

    public let bytes: ImageBytes
    public let kind: Kind
    /// `"…"`: a strong validator, derived from the bytes themselves.
    public let etag: String

    public init(bytes: ImageBytes, kind: Kind, etag: String? = nil) {
        self.bytes = bytes
        self.kind = kind
        self.etag = etag ?? ETag.strong(for: bytes)
    }

    /// The decoded copy, when this entry is one.
    public var decoded: DecodedSource? {
        if case .decoded(let decoded) = kind { return decoded }
        return nil
    }

    public var mediaType: String {
        switch kind {
        case .original, .decoded: "application/octet-stream"
        case .variant(let format, _, _): format.mediaType
        }
    }
}

/// Strong ETags from content: identical bytes, identical tag, on every instance of the service.
public enum ETag {
    /// 64-bit FNV-1a of the bytes and their length, in hex. Not cryptographic: a validator, not a signature.
    public static func strong(for bytes: ImageBytes) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        bytes.withUnsafeBytes { buffer in
            for byte in buffer {
                hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
            }
        }
        hash ^= UInt64(bytes.count) &* 0x9E37_79B9_7F4A_7C15
        let hex = String(hash, radix: 16)
        return "\"" + String(repeating: "0", count: 16 - hex.count) + hex + "\""
    }

    /// Whether an If-None-Match header matches `etag` (strong comparison for our own tags; `*` matches).
    public static func matches(ifNoneMatch header: String, etag: String) -> Bool {
        for candidate in header.split(separator: ",") {
            var tag = candidate.trimmingSpaces()
            if tag == "*" { return true }
            if tag.hasPrefix("W/") { tag.removeFirst(2) }  // weak comparison is what If-None-Match uses
            if tag == etag { return true }
        }
        return false
    }
}
