import Foundation
import ThumbnailCore

/// `/_next/image?url=&w=&q=`, checked as Next.js' image optimizer checks it (its messages, in
/// `detail` and each `reason`), then made the request `/thumb?url=…&w=…&q=…&format=auto` is: the
/// format follows `Accept`, and the two share one cache entry.
///
/// Next.js' loader sends these three: `url` as written in the page (`/a.jpg`,
/// `/_next/static/media/…`, or an absolute URL), `w` one of the configured sizes, `q` always; and,
/// for a `/_next/static/media/…` source of a build with a deployment id, `dpl=<id>`, which only
/// busts caches between deployments (the file's name already has its content hash). `dpl` is
/// checked and then ignored: it is not part of the thumbnail, so it is not part of the cache key.
/// Anything else is refused, as thumbd refuses what it does not do.
enum NextImageQuery {
    /// Next.js' own limit on `url` (thumbd's is 4096).
    static let maxURLLength = 3072
    /// The longest `dpl` taken. Next.js 16 refuses a deployment id longer than 32 characters or
    /// with a character other than a letter, digit, `-` or `_`; Next.js 15 checked nothing, so a
    /// 40-digit git commit id was a valid one: room for that, still a bounded token.
    static let maxDeploymentIDLength = 64
    /// Every parameter it takes, in openapi.yaml's order.
    static let parameters = ["url", "w", "q", "dpl"]

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

        if repeated.contains("dpl") {
            fail("dpl", "\"dpl\" parameter cannot be an array")
        } else if let deployment = values["dpl"], !isDeploymentID(deployment) {
            fail(
                "dpl",
                "\"dpl\" parameter must be a deployment id: 1 to \(maxDeploymentIDLength) letters, digits, - or _")
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

    /// Whether `text` is a deployment id as Next.js writes it into `dpl` (unencoded).
    static func isDeploymentID(_ text: String) -> Bool {
        (1...maxDeploymentIDLength).contains(text.utf8.count)
            && text.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
                    true
                default: false
                }
            }
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
