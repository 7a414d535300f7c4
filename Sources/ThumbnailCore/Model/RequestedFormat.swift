/// The format a request asks for, after `format=auto` has been resolved against `Accept`.
/// `.source` ("like the source") is part of the cache key as is: it is deterministic per source.
public enum RequestedFormat: Sendable, Hashable {
    case source
    case exactly(OutputFormat)

    public var canonical: String {
        switch self {
        case .source: "source"
        case .exactly(let format): format.rawValue
        }
    }

    public func resolve(for source: SourceInfo) -> OutputFormat {
        switch self {
        case .source: OutputFormat.keepingFamily(of: source)
        case .exactly(let format): format
        }
    }
}
