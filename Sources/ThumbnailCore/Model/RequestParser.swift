/// Turns query parameters into a `ThumbnailRequest`, or a 400 naming every problem at once.
///
/// Strict on purpose: unknown, repeated, empty or out-of-range parameters are errors, never
/// ignored, so two spellings of one request can't become two cache entries.
public enum RequestParser {
    public enum Route: Sendable { case thumb, prefetch }

    static let knownNames: Set<String> = ["url", "w", "h", "fit", "crop", "format", "q"]

    public static func parse(
        query: [(name: String, value: String?)], accept: String?, route: Route
    ) throws(ThumbnailError) -> ThumbnailRequest {
        var problems: [ThumbnailError.InvalidParam] = []
        var values: [String: String] = [:]
        var seen: Set<String> = []
        for (name, value) in query {
            guard knownNames.contains(name) else {
                problems.append(.init(name: String(name.prefix(64)), reason: "unknown parameter"))
                continue
            }
            guard seen.insert(name).inserted else {
                if !problems.contains(where: { $0.name == name && $0.reason == "must not be repeated" }) {
                    problems.append(.init(name: name, reason: "must not be repeated"))
                }
                continue
            }
            guard let value, !value.isEmpty else {
                problems.append(.init(name: name, reason: "must not be empty"))
                continue
            }
            values[name] = value
        }

        var source: SourceURL? = nil
        if let text = values["url"] {
            do { source = try SourceURL(parsing: text) } catch { problems += error.invalidParams }
        } else if !seen.contains("url") {
            problems.append(.init(name: "url", reason: "is required"))
        }

        func integer(_ name: String, _ range: ClosedRange<Int>) -> Int? {
            guard let text = values[name] else { return nil }
            guard text.utf8.count <= 6, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let value = Int(text),
                range.contains(value)
            else {
                problems.append(
                    .init(name: name, reason: "must be an integer from \(range.lowerBound) to \(range.upperBound)"))
                return nil
            }
            return value
        }
        func choice<T: RawRepresentable & CaseIterable>(_ name: String, _: T.Type) -> T? where T.RawValue == String {
            guard let text = values[name] else { return nil }
            guard let value = T(rawValue: text) else {
                let names = T.allCases.map(\.rawValue).joined(separator: ", ")
                problems.append(.init(name: name, reason: "must be one of \(names)"))
                return nil
            }
            return value
        }

        let width = integer("w", 1...TransformSpec.maxSide)
        let height = integer("h", 1...TransformSpec.maxSide)
        let quality = integer("q", 1...100)
        let fit = choice("fit", Fit.self)
        let crop = choice("crop", Crop.self)
        var format: RequestedFormat? = nil
        var auto = false
        if let text = values["format"] {
            if text == "auto" {
                auto = true
                format = AcceptNegotiation.preferredFormat(accept: accept)
            } else if let exact = OutputFormat(rawValue: text) {
                format = .exactly(exact)
            } else {
                problems.append(.init(name: "format", reason: "must be one of jpeg, png, webp, avif, auto"))
            }
        }

        let hasTransformParams = ["h", "fit", "crop", "format", "q"].contains { seen.contains($0) }
        if width == nil && !seen.contains("w") && (route == .thumb || hasTransformParams) {
            problems.append(.init(name: "w", reason: "is required"))
        }
        let effectiveFit = fit ?? .inside
        if values["crop"] != nil && effectiveFit != .cover {
            problems.append(.init(name: "crop", reason: "applies only to fit=cover"))
        }
        if effectiveFit != .inside && seen.contains("fit") && !seen.contains("h") {
            problems.append(.init(name: "h", reason: "is required with fit=\(effectiveFit.rawValue)"))
        }

        guard problems.isEmpty, let source else { throw .invalid(problems) }
        let spec = width.map {
            TransformSpec(
                width: $0, height: height, fit: effectiveFit, crop: crop ?? .centre, format: format ?? .source,
                quality: quality ?? TransformSpec.defaultQuality)
        }
        return ThumbnailRequest(source: source, spec: spec, variesOnAccept: auto)
    }
}
