import Foundation
import ThumbnailCore

/// What the framework routes (`/_next/image`, the weserv-style `/`, `/_ipx/`, `/_image`) allow and
/// where their relative sources come from. Each route reads its own query shape and turns it into
/// the `ThumbnailRequest` the equivalent `/thumb` makes, so both share one cache entry.
struct Frontends: Sendable {
    /// `/`, `/_ipx/` and `/_image`: the size and quality policy of `/thumb` (snapping included).
    /// Never signed: a framework's loader runs in the browser, where a key would be public.
    let policy: RequestPolicy
    /// `/_next/image`: `--allowed-widths`, or Next.js' default sizes when it is empty; never
    /// snapped (Next.js' optimizer answers 400).
    let nextWidths: [Int]
    /// Where a source written as a path is fetched from (`--source-base-url`).
    let sourceBase: SourceURL?

    init(_ configuration: ServiceConfiguration) {
        let access = configuration.access
        policy = RequestPolicy(
            allowedWidths: access.allowedWidths, allowedHeights: access.allowedHeights,
            allowedQualities: access.allowedQualities, snapWidths: access.snapWidths)
        nextWidths = access.allowedWidths.isEmpty ? FrameworkWidths.next.sorted() : access.allowedWidths
        sourceBase = configuration.fetch.sourceBaseURL
    }

    /// The longest source path (`/a.jpg`) taken: Next.js' limit, and with a base of at most
    /// `maxBaseLength` it stays under `SourceURL.maxLength` once resolved.
    static let maxPathLength = 3072
    static let maxBaseLength = SourceURL.maxLength - maxPathLength

    /// A source as a framework writes it: an absolute http(s) URL, or a path starting with `/`
    /// resolved against `--source-base-url` (the base with the path appended). A
    /// protocol-relative `//host/…` is refused: it would name a host by a path's spelling.
    func source(_ text: String, name: String) -> Result<SourceURL, ThumbnailError.InvalidParam> {
        if text.hasPrefix("//") {
            return .failure(.init(name: name, reason: "must not be protocol-relative (//)"))
        }
        var absolute = text
        if text.hasPrefix("/") {
            guard text.utf8.count <= Self.maxPathLength else {
                return .failure(.init(name: name, reason: "must be a path of at most \(Self.maxPathLength) bytes"))
            }
            guard let base = sourceBase else {
                return .failure(.init(name: name, reason: "is a path, and --source-base-url is not set"))
            }
            let prefix = base.description.hasSuffix("/") ? String(base.description.dropLast()) : base.description
            absolute = prefix + text
        }
        do {
            return .success(try SourceURL(parsing: absolute))
        } catch {
            let reason = error.invalidParams.first?.reason ?? "is not a valid URL"
            return .failure(.init(name: name, reason: reason))
        }
    }
}

/// A framework route's request in `/thumb`'s words, built parameter by parameter, then checked by
/// `RequestParser` under the routes' policy: one set of rules, one cache key. The problems the
/// parser finds are named back in the route's own words.
struct ThumbTranslation {
    /// The `fit` values thumbd makes, as every framework spells them.
    static let fits = Fit.allCases.map(\.rawValue)
    /// What `fit=cover` keeps, in the frameworks' spellings (weserv's `a`, IPX's `pos`, Astro's
    /// `position`) → `/thumb`'s `crop`.
    static let crops = ["centre": "centre", "center": "centre", "attention": "attention"]
    /// Output formats in the frameworks' spellings → `/thumb`'s `format`.
    static let formats = ["jpg": "jpeg", "jpeg": "jpeg", "png": "png", "webp": "webp", "avif": "avif"]
    static let formatNames = ["jpg", "jpeg", "png", "webp", "avif"]
    static let cropNames = ["centre", "center", "attention"]

    /// `fit` as `name`: one of `fits`, else a problem.
    mutating func addFit(_ value: String?, as name: String, others: String) {
        guard let value, Self.fits.contains(value) else {
            refuse(name, "must be \(Self.fits.joined(separator: ", ")) (thumbd does not do \(others))")
            return
        }
        add("fit", value, as: name)
    }

    /// `crop` as `name`.
    mutating func addCrop(_ value: String?, as name: String) {
        guard let crop = value.flatMap({ Self.crops[$0] }) else {
            refuse(name, "must be \(Self.cropNames.joined(separator: ", "))")
            return
        }
        add("crop", crop, as: name)
    }

    /// `format` as `name`.
    mutating func addFormat(_ value: String?, as name: String) {
        guard let format = value.flatMap({ Self.formats[$0] }) else {
            refuse(name, "must be \(Self.formatNames.joined(separator: ", "))")
            return
        }
        add("format", format, as: name)
    }

    private(set) var query: [(name: String, value: String?)] = []
    /// `/thumb`'s name of each parameter given → the route's.
    private var names: [String: String] = [:]
    private(set) var problems: [ThumbnailError.InvalidParam] = []
    private var source: SourceURL?
    private let sourceName: String

    init(sourceName: String) { self.sourceName = sourceName }

    mutating func setSource(_ result: Result<SourceURL, ThumbnailError.InvalidParam>?) {
        switch result {
        case .success(let url): source = url
        case .failure(let problem): problems.append(problem)
        case nil: problems.append(.init(name: sourceName, reason: "is required"))
        }
    }

    /// `/thumb`'s `name=value`, given on the route as `routeName`.
    mutating func add(_ name: String, _ value: String?, as routeName: String) {
        query.append((name, value))
        if names[name] == nil { names[name] = routeName }
    }

    mutating func refuse(_ name: String, _ reason: String) {
        problems.append(.init(name: String(name.prefix(64)), reason: reason))
    }

    /// Whether `/thumb`'s parameter `name` was given.
    func has(_ name: String) -> Bool { query.contains { $0.name == name } }

    /// The request, or every problem at once. Without a width (a framework asking for the image
    /// as it is): the largest thumbd makes (8192, never enlarged), or the largest allowed width
    /// with `--snap-widths`; with `--allowed-widths` and no snapping, a width is required.
    func request(policy: RequestPolicy) throws(ThumbnailError) -> ThumbnailRequest {
        var query = self.query
        var problems = self.problems
        if !has("w") {
            if let widest = policy.allowedWidths.max() {
                if !policy.snapWidths {
                    problems.append(.init(name: names["w"] ?? "w", reason: "is required (--allowed-widths is set)"))
                }
                query.append(("w", String(widest)))
            } else {
                query.append(("w", String(TransformSpec.maxSide)))
            }
        }
        // The parser checks the rest; the source, already parsed, goes in as it is (its canonical
        // text can be a byte longer than what was sent, `http://h?q` becoming `http://h/?q`, and
        // must not be parsed again against the length limit).
        if source != nil { query.insert(("url", "http://source.invalid/"), at: 0) }
        let parsed: Result<ThumbnailRequest, ThumbnailError>
        do { parsed = .success(try RequestParser.parse(query: query, requireSpec: true, policy: policy)) } catch {
            parsed = .failure(error)
        }
        if case .failure(let error) = parsed {
            guard source != nil || !problems.isEmpty else { throw error }
            // A missing or bad source is already named, in the route's words.
            for problem in error.invalidParams where !(problem.name == "url" && source == nil) {
                problems.append(.init(name: names[problem.name] ?? problem.name, reason: problem.reason))
            }
        }
        guard problems.isEmpty, case .success(var request) = parsed, let source else {
            throw ThumbnailError.invalid(problems)
        }
        request.source = source
        return request
    }
}
