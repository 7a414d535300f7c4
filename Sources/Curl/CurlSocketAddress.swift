/// The address libcurl is about to connect to: what DNS resolved (or the literal in the URL),
/// handed to ``CurlTransferRequest/allowConnection`` before any socket exists.
public struct CurlSocketAddress: Sendable, Equatable {
    public enum Family: Sendable {
        case ipv4
        case ipv6
    }

    public let family: Family
    /// 4 bytes for ``Family/ipv4``, 16 for ``Family/ipv6``, in network order.
    public let bytes: [UInt8]
    public let port: Int

    public init(family: Family, bytes: [UInt8], port: Int) {
        precondition(bytes.count == (family == .ipv4 ? 4 : 16), "CurlSocketAddress: wrong byte count for family")
        self.family = family
        self.bytes = bytes
        self.port = port
    }
}
