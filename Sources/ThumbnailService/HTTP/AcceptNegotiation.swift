import ThumbnailCore

/// `format=auto`: AVIF if the client names it, else WebP if it names it, else like the source.
///
/// Only explicit `image/avif` / `image/webp` entries with q > 0 count: `*/*` is what curl and
/// every crawler send, and they are better served the source's family.
enum AcceptNegotiation {
    static func preferredFormat(accept: String?) -> RequestedFormat {
        guard let accept else { return .source }
        var avif = false
        var webp = false
        for range in accept.split(separator: ",").prefix(64) {
            let parts = range.split(separator: ";")
            guard let type = parts.first?.trimmingSpaces().lowercased() else { continue }
            var quality = 1.0
            for parameter in parts.dropFirst() {
                let pair = parameter.split(separator: "=", maxSplits: 1)
                if pair.count == 2, pair[0].trimmingSpaces().lowercased() == "q" {
                    quality = Double(pair[1].trimmingSpaces()) ?? 0
                }
            }
            guard quality > 0 else { continue }
            if type == "image/avif" { avif = true }
            if type == "image/webp" { webp = true }
        }
        return avif ? .exactly(.avif) : webp ? .exactly(.webp) : .source
    }
}

extension Substring {
    /// Without leading and trailing spaces and tabs (HTTP's optional whitespace).
    func trimmingSpaces() -> String {
        String(drop(while: { $0 == " " || $0 == "\t" }).reversed().drop(while: { $0 == " " || $0 == "\t" }).reversed())
    }
}
