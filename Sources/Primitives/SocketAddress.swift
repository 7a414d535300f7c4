// `package`, not `public`: `withSockaddrPointer` hands this package's own C calls a `sockaddr`;
// no C type is part of Primitives' public API.
package import Glibc

/// An IPv4 or IPv6 address with a port, as the C socket calls want it.
///
/// Why one type: the listener, the test client and the test origin each turned an address
/// literal into a `sockaddr_in` / `sockaddr_in6` by hand, with three copies of the `inet_pton`
/// calls, the byte-order swaps and the length that goes with each family. This is the only parser;
/// it takes literals only (never DNS), so what is configured is exactly what is bound to.
public struct SocketAddress: Sendable, Equatable, CustomStringConvertible {
    public enum Family: Sendable, Equatable {
        case ipv4
        case ipv6
    }

    private enum Storage: @unchecked Sendable {  // plain C structs, no pointers
        case v4(sockaddr_in)
        case v6(sockaddr_in6)
    }

    private let storage: Storage

    /// Parses an IPv4 ("127.0.0.1") or IPv6 ("::1", no brackets, no zone) literal; nil for
    /// anything else (host names included) or a port outside 0...65535.
    public init?(host: String, port: Int) {
        guard let port = UInt16(exactly: port) else { return nil }
        var v4 = sockaddr_in()
        if inet_pton(AF_INET, host, &v4.sin_addr) == 1 {
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = port.bigEndian
            storage = .v4(v4)
            return
        }
        var v6 = sockaddr_in6()
        if inet_pton(AF_INET6, host, &v6.sin6_addr) == 1 {
            v6.sin6_family = sa_family_t(AF_INET6)
            v6.sin6_port = port.bigEndian
            storage = .v6(v6)
            return
        }
        return nil
    }

    /// Reads an address a socket call filled in (`getsockname`, `accept`); nil for a family
    /// other than IPv4/IPv6 or a length too short for its family.
    public init?(_ address: UnsafeRawPointer, length: Int) {
        guard length >= MemoryLayout<sa_family_t>.size else { return nil }
        let family = Int32(address.loadUnaligned(as: sockaddr.self).sa_family)
        switch family {
        case AF_INET where length >= MemoryLayout<sockaddr_in>.size:
            storage = .v4(address.loadUnaligned(as: sockaddr_in.self))
        case AF_INET6 where length >= MemoryLayout<sockaddr_in6>.size:
            storage = .v6(address.loadUnaligned(as: sockaddr_in6.self))
        default:
            return nil
        }
    }

    public var family: Family {
        switch storage {
        case .v4: .ipv4
        case .v6: .ipv6
        }
    }

    /// `AF_INET` or `AF_INET6`, for `socket()`.
    public var socketFamily: Int32 { family == .ipv4 ? AF_INET : AF_INET6 }

    public var port: Int {
        switch storage {
        case .v4(let address): Int(UInt16(bigEndian: address.sin_port))
        case .v6(let address): Int(UInt16(bigEndian: address.sin6_port))
        }
    }

    /// The address bytes in network order: 4 for IPv4, 16 for IPv6.
    public var bytes: [UInt8] {
        switch storage {
        case .v4(let address): withUnsafeBytes(of: address.sin_addr) { Array($0) }
        case .v6(let address): withUnsafeBytes(of: address.sin6_addr) { Array($0) }
        }
    }

    private init(storage: Storage) {
        self.storage = storage
    }

    /// The same address with another port (e.g. the ephemeral port a first bind chose); nil for a
    /// port outside 0...65535.
    public func with(port: Int) -> SocketAddress? {
        guard let port = UInt16(exactly: port) else { return nil }
        switch storage {
        case .v4(var address):
            address.sin_port = port.bigEndian
            return SocketAddress(storage: .v4(address))
        case .v6(var address):
            address.sin6_port = port.bigEndian
            return SocketAddress(storage: .v6(address))
        }
    }

    /// The address as text, without the port ("127.0.0.1", "::1").
    public var host: String {
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        switch storage {
        case .v4(var address): _ = inet_ntop(AF_INET, &address.sin_addr, &text, socklen_t(text.count))
        case .v6(var address): _ = inet_ntop(AF_INET6, &address.sin6_addr, &text, socklen_t(text.count))
        }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// "127.0.0.1:8080", "[::1]:8080".
    public var description: String { family == .ipv6 ? "[\(host)]:\(port)" : "\(host):\(port)" }

    /// Calls `body` with a `sockaddr` pointer and its length, valid only during the call.
    /// Package-wide, not public: a C type stays out of the module's API.
    package func withSockaddrPointer<Result>(
        _ body: (UnsafePointer<sockaddr>, socklen_t) throws -> Result
    ) rethrows -> Result {
        switch storage {
        case .v4(var address):
            try withUnsafePointer(to: &address) {
                try $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    try body($0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        case .v6(var address):
            try withUnsafePointer(to: &address) {
                try $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    try body($0, socklen_t(MemoryLayout<sockaddr_in6>.size))
                }
            }
        }
    }

    public static func == (lhs: SocketAddress, rhs: SocketAddress) -> Bool {
        lhs.family == rhs.family && lhs.port == rhs.port && lhs.bytes == rhs.bytes
    }
}
