/// Strong ETags from a variant's content fingerprint: identical bytes, identical tag, on every
/// instance of the service.
enum ETag {
    /// `"…"`: the fingerprint as 16 hex digits, quoted.
    static func strong(fingerprint: UInt64) -> String {
        let hex = String(fingerprint, radix: 16)
        return "\"" + String(repeating: "0", count: 16 - hex.count) + hex + "\""
    }

    /// Whether an If-None-Match header matches `etag` (weak comparison, as If-None-Match uses;
    /// `*` matches).
    static func matches(ifNoneMatch header: String, etag: String) -> Bool {
        for candidate in header.split(separator: ",") {
            var tag = candidate.trimmingSpaces()
            if tag == "*" { return true }
            if tag.hasPrefix("W/") { tag.removeFirst(2) }
            if tag == etag { return true }
        }
        return false
    }
}
