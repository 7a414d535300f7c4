/// Every invalid setting, reported together.
public struct ConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    public let problems: [String]
    public var description: String { "invalid settings:\n" + problems.map { "  \($0)" }.joined(separator: "\n") }
}
