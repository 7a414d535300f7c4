internal import Primitives

#if canImport(Glibc)
    import Glibc
#endif

/// A parsed IPv4 or IPv6 listen address with its port, as a C socket address.
enum ListenAddress {
    case v4(sockaddr_in)
    case v6(sockaddr_in6)

    init?(host: String, port: UInt16) {
        var v4 = sockaddr_in()
        if inet_pton(AF_INET, host, &v4.sin_addr) == 1 {
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = port.bigEndian
            self = .v4(v4)
            return
        }
        var v6 = sockaddr_in6()
        if inet_pton(AF_INET6, host, &v6.sin6_addr) == 1 {
            v6.sin6_family = sa_family_t(AF_INET6)
            v6.sin6_port = port.bigEndian
            self = .v6(v6)
            return
        }
        return nil
    }

    var isIPv6: Bool {
        if case .v6 = self { return true }
        return false
    }

    func withSockaddrPointer<Result>(_ body: (UnsafePointer<sockaddr>) -> Result) -> Result {
        switch self {
        case .v4(var address):
            withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1, body) }
        case .v6(var address):
            withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1, body) }
        }
    }

    /// Whether a plain listening socket (no SO_REUSEPORT) can bind here right now.
    func isFree() -> Bool {
        let family = isIPv6 ? AF_INET6 : AF_INET
        guard let owner = try? FileDescriptor.socket(family: family, type: Int32(SOCK_STREAM.rawValue)) else {
            return true
        }
        let probe = owner.rawValue
        var yes: Int32 = 1
        // SO_REUSEADDR as the daemons use it: only a live listener (not TIME_WAIT) blocks.
        _ = setsockopt(probe, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        if isIPv6 { _ = setsockopt(probe, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &yes, socklen_t(MemoryLayout<Int32>.size)) }
        let length = socklen_t(isIPv6 ? MemoryLayout<sockaddr_in6>.size : MemoryLayout<sockaddr_in>.size)
        return withExtendedLifetime(owner) { withSockaddrPointer { bind(probe, $0, length) } == 0 }
    }
}
