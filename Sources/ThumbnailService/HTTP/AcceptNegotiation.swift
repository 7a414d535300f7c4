import ThumbnailCore

/// `format=auto` and `/_next/image`: which of AVIF and WebP the client names; like the source when
/// neither. The format itself is picked once the source is read (`RequestedFormat.negotiated`):
/// AVIF first for a still, WebP for an animation.
///
/// Only explicit `image/avif` / `image/webp` entries with q > 0 count: `*/*` is what curl and
/// every crawler send, and they are better served the source's family.
///
/// Read byte by byte in place, without allocating: `/_next/image` hits negotiate on the polling
/// thread, before the kept responses are found (a split-and-lowercase parse cost more than the
/// rest of such a hit).
enum AcceptNegotiation {
    static func preferredFormat(accept: String?) -> RequestedFormat {
        guard var accept else { return .source }
        return accept.withUTF8 { preferredFormat(acceptBytes: $0) }
    }

    /// The same, from the header's bytes (`RequestHead.withHeader`: the hit path reads them in
    /// place, without making a string of the browser's 70-byte header).
    static func preferredFormat(acceptBytes: UnsafeBufferPointer<UInt8>?) -> RequestedFormat {
        guard let acceptBytes else { return .source }
        let (avif, webp) = named(acceptBytes)
        return avif || webp ? .negotiated(avif: avif, webp: webp) : .source
    }

    /// Whether the header names `image/avif` and `image/webp` with q > 0 (its first 64 entries).
    private static func named(_ bytes: UnsafeBufferPointer<UInt8>) -> (avif: Bool, webp: Bool) {
        var avif = false
        var webp = false
        var start = 0
        var entries = 0
        while start <= bytes.count && entries < 64 {
            let end = bytes[start...].firstIndex(of: UInt8(ascii: ",")) ?? bytes.count
            let entry = UnsafeBufferPointer(rebasing: bytes[start..<end])
            switch kind(of: entry) {
            case .avif: avif = true
            case .webp: webp = true
            case nil: break
            }
            start = end + 1
            entries += 1
        }
        return (avif, webp)
    }

    private enum Kind { case avif, webp }

    /// `image/avif` or `image/webp` when the entry is one of them with q > 0.
    private static func kind(of entry: UnsafeBufferPointer<UInt8>) -> Kind? {
        let typeEnd = entry.firstIndex(of: UInt8(ascii: ";")) ?? entry.count
        let type = trimmed(entry, 0, typeEnd)
        let kind: Kind
        if equalsLowercased(entry, type, "image/avif") {
            kind = .avif
        } else if equalsLowercased(entry, type, "image/webp") {
            kind = .webp
        } else {
            return nil
        }
        var start = typeEnd + 1
        while start < entry.count {
            let end = entry[start...].firstIndex(of: UInt8(ascii: ";")) ?? entry.count
            if let equals = entry[start..<end].firstIndex(of: UInt8(ascii: "=")) {
                let name = trimmed(entry, start, equals)
                if equalsLowercased(entry, name, "q") && !isPositive(entry, trimmed(entry, equals + 1, end)) {
                    return nil
                }
            }
            start = end + 1
        }
        return kind
    }

    /// The range without leading and trailing spaces and tabs (HTTP's optional whitespace).
    private static func trimmed(_ bytes: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int) -> Range<Int> {
        var (lower, upper) = (start, end)
        while lower < upper && (bytes[lower] == 0x20 || bytes[lower] == 0x09) { lower += 1 }
        while upper > lower && (bytes[upper - 1] == 0x20 || bytes[upper - 1] == 0x09) { upper -= 1 }
        return lower..<upper
    }

    private static func equalsLowercased(
        _ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, _ expected: StaticString
    ) -> Bool {
        guard range.count == expected.utf8CodeUnitCount else { return false }
        let pointer = expected.utf8Start
        for offset in 0..<range.count {
            var byte = bytes[range.lowerBound + offset]
            if byte >= 0x41 && byte <= 0x5A { byte |= 0x20 }
            if byte != pointer[offset] { return false }
        }
        return true
    }

    /// Whether a q value is a number above zero (digits, at most one point); anything else is 0.
    private static func isPositive(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Bool {
        var digits = 0
        var points = 0
        var nonZero = false
        for index in range {
            let byte = bytes[index]
            if byte == UInt8(ascii: ".") {
                points += 1
            } else if byte >= 0x30 && byte <= 0x39 {
                digits += 1
                if byte != 0x30 { nonZero = true }
            } else {
                return false
            }
        }
        return digits > 0 && points <= 1 && nonZero
    }
}

extension Substring {
    /// Without leading and trailing spaces and tabs (HTTP's optional whitespace).
    func trimmingSpaces() -> String {
        String(drop(while: { $0 == " " || $0 == "\t" }).reversed().drop(while: { $0 == " " || $0 == "\t" }).reversed())
    }
}
