import ThumbnailCore

/// The weserv-style query at the root, `/?url=…&w=&h=&dpr=&q=&fit=&a=&output=&we&filename=`, as
/// Nuxt Image's `weserv` provider builds it: the same request as `/thumb` with weserv's names.
///
/// `url` may come unencoded, as the last parameter (older providers append `baseURL + src` as
/// is): when its value starts with `http://` or `https://` written out, everything after `url=`,
/// `&` included, is the URL, sent on as written. An encoded `url` is an ordinary parameter.
///
/// What thumbd does not do is a 400 naming it, never ignored: another `fit` (contain, outside)
/// or `a` (a side, entropy, focal), an `output` it does not make (gif, tiff, json), any filter or
/// other operation. `we` (without enlargement) is accepted: thumbd never enlarges.
enum WeservQuery {
    /// Every parameter it takes (`url` included), in openapi.yaml's order.
    static let parameters = ["url", "w", "h", "dpr", "q", "fit", "a", "output", "we", "filename"]
    /// What `we` may be given as (Nuxt writes it bare).
    static let enlargeValues = ["", "true", "1"]

    /// The request, and the download name `filename` asks for (sanitised, without extension).
    static func parse(target: String, query: [(name: String, value: String?)], frontends: Frontends)
        throws(ThumbnailError) -> (request: ThumbnailRequest, filename: String?)
    {
        var translation = ThumbTranslation(sourceName: "url")
        var arguments = query
        var sourceText: String? = nil
        if let index = arguments.firstIndex(where: { $0.name == "url" }) {
            if let raw = unencodedURL(in: target) {
                // Everything after it is the URL: the parsed arguments after it were pieces of it.
                sourceText = raw
                arguments = Array(arguments[..<index])
            } else {
                sourceText = arguments[index].value ?? ""
                arguments.remove(at: index)
                if arguments.contains(where: { $0.name == "url" }) { translation.refuse("url", "must not be repeated") }
            }
        }
        if let sourceText, sourceText.isEmpty {
            translation.refuse("url", "must not be empty")
        } else {
            translation.setSource(sourceText.map { frontends.source($0, name: "url") })
        }

        var filename: String? = nil
        var seen: Set<String> = []
        for (name, value) in arguments {
            if ["we", "filename"].contains(name) && !seen.insert(name).inserted {
                translation.refuse(name, "must not be repeated")
                continue
            }
            switch name {
            case "w", "h", "dpr", "q":
                translation.add(name, value, as: name)
            case "fit": translation.addFit(value, as: "fit", others: "contain or outside")
            case "a": translation.addCrop(value, as: "a")
            case "output": translation.addFormat(value, as: "output")
            case "we":
                // Without enlargement: what thumbd always does.
                guard value == nil || enlargeValues.contains(value ?? "") else {
                    translation.refuse("we", "must be empty, true or 1 (thumbd never enlarges)")
                    continue
                }
            case "filename":
                filename = sanitisedFilename(value ?? "")
            default:
                translation.refuse(name, "is not supported by thumbd")
            }
        }
        return (try translation.request(policy: frontends.policy), filename)
    }

    /// The raw text after the first `url=` of the target when it is written out unencoded (starts
    /// with `http://` or `https://`), else nil.
    static func unencodedURL(in target: String) -> String? {
        guard let mark = target.firstIndex(of: "?") else { return nil }
        let query = target[target.index(after: mark)...]
        var start = query.startIndex
        while start < query.endIndex {
            let end = query[start...].firstIndex(of: "&") ?? query.endIndex
            let argument = query[start..<end]
            if argument == "url" { return nil }
            if argument.hasPrefix("url=") {
                let value = query[argument.index(argument.startIndex, offsetBy: 4)...]
                let lowered = value.prefix(8).lowercased()
                return lowered.hasPrefix("http://") || lowered.hasPrefix("https://") ? String(value) : nil
            }
            start = end < query.endIndex ? query.index(after: end) : end
        }
        return nil
    }

    /// The name weserv's `filename` asks for, made safe for a header: its last path component
    /// without its extension (the answer's format gives it one), letters, digits, `-` and `_` kept
    /// (anything else dropped), at most 100 characters; "image" when nothing is left. Sanitised
    /// rather than refused: Nuxt sends whatever the source's file is called.
    static func sanitisedFilename(_ text: String) -> String {
        let base = text.lastIndex { $0 == "/" || $0 == "\\" }.map { text[text.index(after: $0)...] } ?? text[...]
        let stem = base.lastIndex(of: ".").map { base[..<$0] } ?? base
        let kept = stem.unicodeScalars.filter {
            ($0.value >= 0x30 && $0.value <= 0x39) || ($0.value >= 0x41 && $0.value <= 0x5A)
                || ($0.value >= 0x61 && $0.value <= 0x7A) || $0 == "-" || $0 == "_"
        }
        var name = ""
        name.unicodeScalars.append(contentsOf: kept.prefix(100))
        return name.isEmpty ? "image" : name
    }

    /// A file extension for a format.
    static func fileExtension(_ format: OutputFormat) -> String {
        format == .jpeg ? "jpg" : format.rawValue
    }
}
