/// One request parameter of `/thumb` and `/prefetch`, defined once: its name, its type and
/// bounds, whether and how it enters the cache key, and its description. The parser, `thumbd
/// --help` and the OpenAPI contract test read `all`; the cache key (`TransformSpec`, a plain
/// Hashable value) is checked against each row's `key` by `theKeyFollowsTheParameterTable`.
public struct RequestParameter: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        /// The source URL (absolute http/https, at most `SourceURL.maxLength` bytes).
        case url
        /// Decimal digits only, within the range.
        case integer(ClosedRange<Int>)
        /// A decimal with at most `fractionDigits` digits after the point, within the range.
        case decimal(ClosedRange<Double>, fractionDigits: Int)
        /// One of these words.
        case choice([String])
        /// An HMAC-SHA256 signature, base64url without padding (checked by the host, not here).
        case signature
    }

    /// How the parameter enters the cache key.
    public enum Key: Sendable, Equatable {
        /// It is the source part of every key.
        case source
        /// Always, in canonical form (its default when absent).
        case always
        /// Only with `fit=cover` (elsewhere it changes nothing).
        case onlyWithCover
        /// Multiplies `w` and `h` before they enter the key (so `w=600` and `w=300&dpr=2` share one).
        case scalesSize
        /// Resolved against `Accept` first for `auto` (then always).
        case negotiated
        /// Never: it says who may ask, not what is made (rotating signing keys must not empty the
        /// cache).
        case never
    }

    public let name: String
    public let kind: Kind
    public let key: Key
    /// Required on `/thumb` (on `/prefetch` only `url` is, and `w` once any output parameter is given).
    public let requiredForThumb: Bool
    /// The default as a client would write it; nil when there is none.
    public let defaultValue: String?
    /// One line for `--help` and the OpenAPI description.
    public let summary: String
    /// Accepted only when signed URLs are on (`RequestPolicy.signed`); otherwise unknown.
    public var onlyWhenSigned: Bool { key == .never }

    public static let url = RequestParameter(
        name: "url", kind: .url, key: .source, requiredForThumb: true, defaultValue: nil,
        summary: "Absolute http or https URL of the source image (percent-encoded). No user info.")
    public static let width = RequestParameter(
        name: "w", kind: .integer(1...TransformSpec.maxSide), key: .always, requiredForThumb: true, defaultValue: nil,
        summary: "Width of the box, in CSS pixels (times dpr on output).")
    public static let height = RequestParameter(
        name: "h", kind: .integer(1...TransformSpec.maxSide), key: .always, requiredForThumb: false,
        defaultValue: nil,
        summary: "Height of the box, in CSS pixels (times dpr on output). Required with fit=cover and fit=fill.")
    public static let dpr = RequestParameter(
        name: "dpr", kind: .decimal(1...4, fractionDigits: 1), key: .scalesSize, requiredForThumb: false,
        defaultValue: "1",
        summary: "Device pixel ratio, 1 to 4, at most one decimal: the output box is w×dpr by h×dpr.")
    public static let fit = RequestParameter(
        name: "fit", kind: .choice(Fit.allCases.map(\.rawValue)), key: .always, requiredForThumb: false,
        defaultValue: Fit.inside.rawValue,
        summary: "inside keeps the aspect within the box; cover fills it and crops (a smaller source: the largest "
            + "box of its shape); fill stretches.")
    public static let crop = RequestParameter(
        name: "crop", kind: .choice(Crop.allCases.map(\.rawValue)), key: .onlyWithCover, requiredForThumb: false,
        defaultValue: Crop.centre.rawValue,
        summary: "What fit=cover keeps; attention is libvips' smart crop. Only with fit=cover.")
    public static let format = RequestParameter(
        name: "format", kind: .choice(OutputFormat.requestable.map(\.rawValue) + ["auto"]), key: .negotiated,
        requiredForThumb: false, defaultValue: nil,
        summary:
            "Output format. Default: the source's family (JPEG→JPEG, PNG→PNG, WebP→WebP, animated GIF→animated GIF, else JPEG, or PNG with alpha); auto picks AVIF (WebP for an animation) or WebP when Accept names them (Vary: Accept). An animation stays animated as GIF or WebP; jpeg, png and avif give its first frame."
    )
    public static let quality = RequestParameter(
        name: "q", kind: .integer(1...100), key: .always, requiredForThumb: false,
        defaultValue: String(TransformSpec.defaultQuality), summary: "Encoder quality (JPEG, WebP, AVIF).")

    public static let expires = RequestParameter(
        name: "exp", kind: .integer(0...99_999_999_999), key: .never, requiredForThumb: false, defaultValue: nil,
        summary: "Signed URLs only: Unix time (seconds) after which the URL is refused (403); covered by sig.")
    public static let signature = RequestParameter(
        name: "sig", kind: .signature, key: .never, requiredForThumb: false, defaultValue: nil,
        summary:
            "Signed URLs only, required then, and last: base64url (no padding) HMAC-SHA256 of the path and query before &sig=."
    )

    /// Every parameter, in documentation order.
    public static let all: [RequestParameter] = [
        url, width, height, dpr, fit, crop, format, quality, expires, signature,
    ]
}
