/// Turns query parameters into a `ThumbnailRequest`, or a 400 naming every problem at once, by the
/// definitions in `RequestParameter.all`.
///
/// Strict on purpose: unknown, repeated, empty or out-of-range parameters are errors, never
/// ignored, so two spellings of one request can't become two cache entries.
public enum RequestParser {
    private static let byName = Dictionary(uniqueKeysWithValues: RequestParameter.all.map { ($0.name, $0) })

    /// `requireSpec`: `w` is required (`/thumb`); otherwise (`/prefetch`) only once any output
    /// parameter is given. `policy` narrows what may be asked for.
    public static func parse(
        query: [(name: String, value: String?)], requireSpec: Bool, policy: RequestPolicy = RequestPolicy()
    ) throws(ThumbnailError) -> ThumbnailRequest {
        var problems: [ThumbnailError.InvalidParam] = []
        let (texts, seen) = collectTexts(query, policy: policy, problems: &problems)

        /// The checked value of a parameter present in the query, or nil (absent or bad).
        func value(_ parameter: RequestParameter) -> Value? {
            guard let text = texts[parameter.name] else { return nil }
            switch parameter.validate(text) {
            case .success(let value): return value
            case .failure(let problem):
                problems.append(problem)
                return nil
            }
        }

        var source: SourceURL? = nil
        if case .source(let url) = value(.url) { source = url }
        if !seen.contains("url") { problems.append(.init(name: "url", reason: "is required")) }
        var width = value(.width)?.integer
        var height = value(.height)?.integer
        let dprTenths = value(.dpr)?.tenths ?? 10
        let fit = value(.fit)?.word.flatMap(Fit.init(rawValue:))
        let crop = value(.crop)?.word.flatMap(Crop.init(rawValue:))
        let quality = value(.quality)?.integer
        let formatWord = value(.format)?.word
        let format: RequestedFormat? = formatWord.flatMap(OutputFormat.init(rawValue:)).map { .exactly($0) }

        let expires = value(.expires)?.integer
        _ = value(.signature)
        checkAllowedSizes(width: &width, height: &height, policy: policy, problems: &problems)
        if let quality, !policy.allowedQualities.isEmpty, !policy.allowedQualities.contains(quality) {
            problems.append(
                .init(
                    name: "q",
                    reason: "must be one of \(policy.allowedQualities.map(String.init).joined(separator: ", "))"))
        }
        if policy.signed && !seen.contains("sig") { problems.append(.init(name: "sig", reason: "is required")) }

        let outputNames = RequestParameter.all.filter { ![.source, .never].contains($0.key) && $0 != .width }.map(
            \.name)
        if !seen.contains("w") && (requireSpec || outputNames.contains { seen.contains($0) }) {
            problems.append(.init(name: "w", reason: "is required"))
        }
        let effectiveFit = fit ?? .inside
        if texts["crop"] != nil && effectiveFit != .cover {
            problems.append(.init(name: "crop", reason: "applies only to fit=cover"))
        }
        if effectiveFit != .inside && seen.contains("fit") && !seen.contains("h") {
            problems.append(.init(name: "h", reason: "is required with fit=\(effectiveFit.rawValue)"))
        }

        guard problems.isEmpty, let source else { throw .invalid(problems) }
        let spec = width.map {
            TransformSpec(
                width: $0, height: height, dprTenths: dprTenths, fit: effectiveFit, crop: crop ?? .centre,
                format: format ?? .source, quality: quality ?? policy.defaultQuality)
        }
        return ThumbnailRequest(
            source: source, spec: spec, formatIsNegotiated: formatWord == "auto", expires: expires)
    }

    /// The query's texts by name, each parameter given once and not empty; a problem for every
    /// parameter that is unknown (or allowed only on signed URLs and these are off), repeated or
    /// empty. `seen`: every known name given, repeated ones included.
    private static func collectTexts(
        _ query: [(name: String, value: String?)], policy: RequestPolicy,
        problems: inout [ThumbnailError.InvalidParam]
    ) -> (texts: [String: String], seen: Set<String>) {
        var texts: [String: String] = [:]
        var seen: Set<String> = []
        for (name, value) in query {
            guard let parameter = byName[name], !parameter.onlyWhenSigned || policy.signed else {
                problems.append(.init(name: String(name.prefix(64)), reason: "unknown parameter"))
                continue
            }
            guard seen.insert(name).inserted else {
                // Neither copy counts: if the first did, the checks that depend on it (`h` with
                // `fit=cover`, `crop` without it) would depend on the order of the copies.
                texts[name] = nil
                if !problems.contains(where: { $0.name == name && $0.reason == "must not be repeated" }) {
                    problems.append(.init(name: name, reason: "must not be repeated"))
                }
                continue
            }
            guard let value, !value.isEmpty else {
                problems.append(.init(name: name, reason: "must not be empty"))
                continue
            }
            texts[name] = value
        }
        return (texts, seen)
    }

    /// The size policy (`--allowed-widths`, `--allowed-heights`, `--snap-widths`): a problem for a
    /// size outside it, or the width snapped to an allowed one (and the height with it, when heights
    /// are not restricted: the box keeps its shape). Heights are checked as requested.
    private static func checkAllowedSizes(
        width: inout Int?, height: inout Int?, policy: RequestPolicy, problems: inout [ThumbnailError.InvalidParam]
    ) {
        if let requested = height, !policy.allowedHeights.isEmpty, !policy.allowedHeights.contains(requested) {
            problems.append(
                .init(
                    name: "h",
                    reason: "must be one of \(policy.allowedHeights.map(String.init).joined(separator: ", "))"))
        }
        guard let requested = width, !policy.allowedWidths.isEmpty, !policy.allowedWidths.contains(requested) else {
            return
        }
        guard let snapped = policy.snappedWidth(requested) else {
            problems.append(
                .init(
                    name: "w", reason: "must be one of \(policy.allowedWidths.map(String.init).joined(separator: ", "))"
                ))
            return
        }
        width = snapped
        if let box = height, policy.allowedHeights.isEmpty {
            height = min(TransformSpec.maxSide, max(1, (box * snapped + requested / 2) / requested))
        }
    }

    /// A checked parameter value.
    enum Value {
        case source(SourceURL)
        case number(Int)
        /// A decimal in tenths.
        case decimal(Int)
        case choice(String)

        var integer: Int? { if case .number(let n) = self { n } else { nil } }
        var tenths: Int? { if case .decimal(let n) = self { n } else { nil } }
        var word: String? { if case .choice(let w) = self { w } else { nil } }
    }
}

extension RequestParameter {
    /// Checks one value against this definition.
    func validate(_ text: String) -> Result<RequestParser.Value, ThumbnailError.InvalidParam> {
        switch kind {
        case .url:
            do { return .success(.source(try SourceURL(parsing: text))) } catch {
                return .failure(error.invalidParams.first ?? .init(name: name, reason: "is not a valid URL"))
            }
        case .integer(let range):
            // No more digits than the largest value has (leading zeros aside, nothing longer is valid).
            guard text.utf8.count <= String(range.upperBound).utf8.count,
                text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let value = Int(text),
                range.contains(value)
            else {
                return .failure(
                    .init(name: name, reason: "must be an integer from \(range.lowerBound) to \(range.upperBound)"))
            }
            return .success(.number(value))
        case .decimal(let range, let fractionDigits):
            // Digits, optionally a point and at most `fractionDigits` digits: no signs, exponents or
            // spaces, so one value has few spellings (1, 1.0 and 1.5 are all there is to it).
            let parts = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
            let digits = { (part: Substring) in !part.isEmpty && part.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 } }
            let bad = ThumbnailError.InvalidParam(
                name: name,
                reason:
                    "must be a number from \(Self.decimalText(range.lowerBound)) to \(Self.decimalText(range.upperBound)) with at most \(fractionDigits) decimal"
            )
            guard text.utf8.count <= 8, digits(parts[0]),
                parts.count == 1 || (digits(parts[1]) && parts[1].count <= fractionDigits),
                let value = Double(text), range.contains(value)
            else { return .failure(bad) }
            return .success(.decimal(Int((value * 10).rounded())))
        case .signature:
            guard text.utf8.count == 43, text.utf8.allSatisfy(Self.isBase64URL) else {
                return .failure(.init(name: name, reason: "must be 43 base64url characters"))
            }
            return .success(.choice(text))
        case .choice(let words):
            guard words.contains(text) else {
                return .failure(.init(name: name, reason: "must be one of \(words.joined(separator: ", "))"))
            }
            return .success(.choice(text))
        }
    }

    static func isBase64URL(_ byte: UInt8) -> Bool {
        (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x30 && byte <= 0x39)
            || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
    }

    public static func decimalText(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }
}
