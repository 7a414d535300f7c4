internal import Primitives

enum IPLiteral {
    /// The tree's one IP-literal parser (`SocketAddress`).
    static func isValid(_ text: String) -> Bool { SocketAddress(host: text, port: 0) != nil }
}
