internal import Primitives

/// An IPv4 or IPv6 address, as bytes in network order.
public struct IPAddress: Sendable, Hashable, CustomStringConvertible {
    public let bytes: [UInt8]

    public init?(bytes: [UInt8]) {
        guard bytes.count == 4 || bytes.count == 16 else { return nil }
        self.bytes = bytes
    }

    /// Parses dotted-quad IPv4 (exactly four decimal parts) or IPv6 text (with `::` and an
    /// optional trailing dotted quad). Zone ids are refused. The one IP-literal parser of the tree
    /// (`SocketAddress`, on `inet_pton`), so the policy reads an address exactly as the socket
    /// layer would.
    public init?(text: String) {
        guard let address = SocketAddress(host: text, port: 0) else { return nil }
        bytes = address.bytes
    }

    public var isIPv6: Bool { bytes.count == 16 }

    public var description: String {
        if bytes.count == 4 { return bytes.map(String.init).joined(separator: ".") }
        return stride(from: 0, to: 16, by: 2).map { String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16) }
            .joined(separator: ":")
    }
}
