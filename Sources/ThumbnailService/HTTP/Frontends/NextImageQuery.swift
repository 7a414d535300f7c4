import Foundation
import ThumbnailCore

/// `/_next/image?url=&w=&q=`, checked as Next.js' image optimizer checks it (its messages, in
/// `detail` and each `reason`), then made the request `/thumb?url=…&w=…&q=…&format=auto` is: the
/// format follows `Accept`, and the two share one cache entry.
///
/// Next.js' loader sends exactly these three: `url` as written in the page (`/a.jpg`,
/// `/_next/static/media/…`, or an absolute URL), `w` one of the configured sizes, `q` always.
/// Anything else is refused, as thumbd refuses what it does not do.
enum NextImageQuery {
    /// Next.js' own limit on `url` (thumbd's is 4096).
    static let maxURLLength = 3072
    /// Every parameter it takes, in openapi.yaml's order.
    static let parameters = ["url", "w", "q"]

    static func parse(_ query: [(name: String, value: String?)], frontends: Frontends) throws(ThumbnailError)
        -> ThumbnailRequest
    {
        var problems: [ThumbnailError.InvalidParam] = []
        var values: [String: String] = [:]
        var repeated: Set<String> = []
        for (name, value) in query {
            guard parameters.contains(name) else {
                problems.append(
                    .init(name: String(name.prefix(64)), reason: "\"\(name.prefix(64))\" parameter is not supported"))
                continue
            }
            if values[name] != nil || repeated.contains(name) {
                repeated.insert(name)
                continue
            }
            values[name] = value ?? ""
        }
        func fail(_ name: String, _ message: String) { problems.append(.init(name: name, reason: message)) }

        var source: SourceURL?
        if repeated.contains("url") {
            fail("url", "\"url\" parameter cannot be an array")
        } else if let text = values["url"], !text.isEmpty {
            source = checkedSource(text, frontends: frontends, fail: fail)
        } else {
            fail("url", "\"url\" parameter is required")
        }

        let width = number("w", "(width)", values, repeated, fail)
        if let width, width == 0 {
            fail("w", "\"w\" parameter (width) must be an integer greater than 0")
        } else if let width, !frontends.nextWidths.contains(width) {
            fail("w", "\"w\" parameter (width) of \(width) is not allowed")
        }
        let quality = number("q", "(quality)", values, repeated, fail)
        let qualities = frontends.policy.allowedQualities
        if let quality, !(1...100).contains(quality) {
            fail("q", "\"q\" parameter (quality) must be an integer between 1 and 100")
        } else if let quality, !qualities.isEmpty, !qualities.contains(quality) {
            fail("q", "\"q\" parameter (quality) of \(quality) is not allowed")
        }

        guard problems.isEmpty, let source, let width, let quality else {
            throw ThumbnailError(
                .invalidParameter, problems.map(\.reason).joined(separator: "; "), invalidParams: problems)
        }
        return ThumbnailRequest(
            source: source, spec: TransformSpec(width: width, quality: quality), formatIsNegotiated: true)
    }

    /// `w` or `q`: required, once, digits only (a value past any width or quality is out of
    /// range, not a number to parse).
    private static func number(
        _ name: String, _ meaning: String, _ values: [String: String], _ repeated: Set<String>,
        _ fail: (String, String) -> Void
    ) -> Int? {
        if repeated.contains(name) {
            fail(name, "\"\(name)\" parameter \(meaning) cannot be an array")
            return nil
        }
        guard let text = values[name], !text.isEmpty else {
            fail(name, "\"\(name)\" parameter \(meaning) is required")
            return nil
        }
        guard text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
            fail(
                name,
                name == "w"
                    ? "\"w\" parameter (width) must be an integer greater than 0"
                    : "\"q\" parameter (quality) must be an integer between 1 and 100")
            return nil
        }
        // Leading zeros aside, more than five digits is beyond every width and quality.
        let digits = text.drop { $0 == "0" }
        return digits.count > 5 ? 99_999 : Int(digits) ?? 0
    }

    /// The source: not protocol-relative, not too long, not this optimizer itself (a loop), and
    /// resolved like every framework route's.
    private static func checkedSource(
        _ text: String, frontends: Frontends, fail: (String, String) -> Void
    ) -> SourceURL? {
        guard text.utf8.count <= maxURLLength else {
            fail("url", "\"url\" parameter is too long")
            return nil
        }
        guard !text.hasPrefix("//") else {
            fail("url", "\"url\" parameter cannot be a protocol-relative URL (//)")
            return nil
        }
        switch frontends.source(text, name: "url") {
        case .failure(let problem):
            fail("url", "\"url\" parameter is invalid: it \(problem.reason)")
            return nil
        case .success(let source):
            if isOptimizer(source) {
                fail("url", "\"url\" parameter cannot be recursive")
                return nil
            }
            return source
        }
    }

    /// Whether the source's path, percent-decoded, is an `/_next/image` (anywhere in it, as
    /// Next.js checks): fetching it would have an optimizer, this one or another, fetch itself.
    static func isOptimizer(_ source: SourceURL) -> Bool {
        let path = source.pathAndQuery.prefix { $0 != "?" }
        let decoded = String(path).removingPercentEncoding ?? String(path)
        return decoded.hasSuffix("/_next/image") || decoded.contains("/_next/image/")
    }
}
