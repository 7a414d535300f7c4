import ThumbnailCore

/// Reads what an origin's answer says about caching it — `Cache-Control`, `Expires`, `Date`,
/// `ETag`, `Last-Modified` — into Core's `OriginDirectives`. Origin headers are hostile: libcurl
/// hands over at most a few bounded values per name (`CurlImageFetcher`), and everything here is
/// parsed strictly; anything malformed is ignored (or, for `Expires`, read as "already expired",
/// as RFC 9111 §5.3 asks), never interpreted.
enum OriginCacheHeaders {
    /// The headers to ask libcurl for.
    static let names = ["cache-control", "expires", "date", "etag", "last-modified"]
    /// Longest ETag or Last-Modified sent back to the origin; longer ones are not kept.
    static let maxValidatorBytes = 256

    /// `now`: Unix seconds, for an `Expires` without a usable `Date`.
    static func directives(_ headers: [String: [String]], now: Double) -> OriginDirectives {
        var directives = OriginDirectives(validators: validators(headers))
        var maxAge: Int?
        var sharedMaxAge: Int?
        for value in headers["cache-control"] ?? [] {
            for item in value.split(separator: ",") {
                let item = item.trimmingSpaces().lowercased()
                let (name, argument) = split(item)
                switch name {
                case "no-store", "private": directives.noStore = true
                // "Store, but ask before every use": as short a lifetime as the policy allows.
                case "no-cache": maxAge = 0
                case "max-age": if let seconds = deltaSeconds(argument) { maxAge = min(maxAge ?? seconds, seconds) }
                case "s-maxage":
                    if let seconds = deltaSeconds(argument) { sharedMaxAge = min(sharedMaxAge ?? seconds, seconds) }
                default: break
                }
            }
        }
        // We are a shared cache: s-maxage wins over max-age, which wins over Expires (RFC 9111 §4.2.1).
        if let seconds = sharedMaxAge ?? maxAge {
            directives.lifetime = .seconds(seconds)
        } else if let expiresText = headers["expires"]?.first {
            let date = headers["date"]?.first.flatMap(HTTPDate.parse).map(Double.init) ?? now
            let expires = HTTPDate.parse(expiresText).map(Double.init) ?? 0
            directives.lifetime = .seconds(max(0, expires - date))
        }
        return directives
    }

    /// The validators to revalidate with, when they are well-formed and short.
    static func validators(_ headers: [String: [String]]) -> SourceValidators {
        var validators = SourceValidators()
        if let etag = headers["etag"]?.first?[...].trimmingSpaces(), isEntityTag(etag) { validators.etag = etag }
        if let date = headers["last-modified"]?.first?[...].trimmingSpaces(), date.utf8.count <= maxValidatorBytes,
            HTTPDate.parse(date) != nil
        {
            validators.lastModified = date
        }
        return validators
    }

    /// `"…"` or `W/"…"` with only the characters RFC 9110 §8.8.3 allows inside (ASCII here).
    static func isEntityTag(_ text: String) -> Bool {
        var bytes = Array(text.utf8)
        guard bytes.count <= maxValidatorBytes else { return false }
        if bytes.starts(with: Array("W/".utf8)) { bytes.removeFirst(2) }
        guard bytes.count >= 2, bytes.first == UInt8(ascii: "\""), bytes.last == UInt8(ascii: "\"") else {
            return false
        }
        return bytes.dropFirst().dropLast().allSatisfy { $0 == 0x21 || (0x23...0x7E).contains($0) }
    }

    private static func split(_ item: String) -> (String, String?) {
        guard let equals = item.firstIndex(of: "=") else { return (item, nil) }
        var argument = item[item.index(after: equals)...].trimmingSpaces()
        if argument.count >= 2, argument.hasPrefix("\""), argument.hasSuffix("\"") {
            argument = String(argument.dropFirst().dropLast())
        }
        return (item[..<equals].trimmingSpaces(), argument)
    }

    /// A delta-seconds: digits only; huge values saturate (RFC 9111 §1.2.2), the policy clamps them.
    private static func deltaSeconds(_ text: String?) -> Int? {
        guard let text, !text.isEmpty, text.utf8.count <= 20, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 })
        else { return nil }
        return Int(text) ?? Int(Int32.max)
    }
}
