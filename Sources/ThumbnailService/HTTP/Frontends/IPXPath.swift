import Foundation
import ThumbnailCore

/// The IPX path Nuxt Image's `ipx` provider builds, `/_ipx/<modifiers or _>/<source>`: modifiers
/// `w_300`, `h_200`, `s_300x200`, `f_webp`, `q_75`, `fit_cover`, `pos_attention` (and IPX's long
/// names, `width_300` …), joined with `&` (Nuxt) or `,` (IPX's docs); the source a path resolved
/// against `--source-base-url`, or an absolute http(s) URL written after the modifiers. The rest
/// of the target, its query included, is the source as sent. Any other modifier or value is a
/// 400 naming it.
enum IPXPath {
    static let prefix = "/_ipx/"

    static func parse(target: String, frontends: Frontends) throws(ThumbnailError) -> ThumbnailRequest {
        var translation = ThumbTranslation(sourceName: "path")
        let rest = target.dropFirst(prefix.count)
        guard let slash = rest.firstIndex(of: "/") else {
            translation.setSource(nil)
            return try translation.request(policy: frontends.policy)
        }
        let modifiers = rest[..<slash]
        let path = rest[rest.index(after: slash)...]
        let lowered = path.prefix(8).lowercased()
        let isAbsolute = lowered.hasPrefix("http://") || lowered.hasPrefix("https://")
        translation.setSource(
            path.isEmpty ? nil : frontends.source(isAbsolute ? String(path) : "/" + path, name: "path"))
        // Percent-decoded: a client may encode the separators (`%26`, `%2C`) like any path byte.
        let decoded = String(modifiers).removingPercentEncoding ?? String(modifiers)
        if decoded != "_" {
            for modifier in decoded.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "&" || $0 == "," })
            {
                guard !modifier.isEmpty else {
                    translation.refuse("modifiers", "must be _ or modifiers joined by & or , (none empty)")
                    continue
                }
                add(modifier, to: &translation)
            }
        }
        return try translation.request(policy: frontends.policy)
    }

    private static func add(_ modifier: Substring, to translation: inout ThumbTranslation) {
        let parts = modifier.split(separator: "_", maxSplits: 1, omittingEmptySubsequences: false)
        let name = String(parts[0])
        let value = parts.count == 2 ? String(parts[1]) : nil
        switch name {
        case "w", "width": translation.add("w", value, as: name)
        case "h", "height": translation.add("h", value, as: name)
        case "q", "quality": translation.add("q", value, as: name)
        case "s", "resize":
            let sides = value?.split(separator: "x", omittingEmptySubsequences: false) ?? []
            guard sides.count == 2 else {
                translation.refuse(name, "must be WIDTHxHEIGHT")
                return
            }
            translation.add("w", String(sides[0]), as: name)
            translation.add("h", String(sides[1]), as: name)
        case "f", "format": translation.addFormat(value, as: name)
        case "fit": translation.addFit(value, as: name, others: "contain or outside")
        case "pos", "position": translation.addCrop(value, as: name)
        default:
            translation.refuse(name, "is not supported by thumbd")
        }
    }
}
