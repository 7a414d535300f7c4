internal import Primitives

#if canImport(Glibc)
    internal import Glibc
#endif

extension SocketAddress {
    /// Whether a plain listening socket (no SO_REUSEPORT) can bind here right now. The daemons bind
    /// with SO_REUSEPORT, which would let a second server share a port another process already
    /// listens on; this probe makes that fail as it should.
    func isFreeToListen() -> Bool {
        guard let probe = try? FileDescriptor.tcpSocket(for: self) else { return true }
        // SO_REUSEADDR as the daemons use it: only a live listener (not TIME_WAIT) blocks.
        try? probe.setOption(level: SOL_SOCKET, name: SO_REUSEADDR, value: 1)
        if family == .ipv6 { try? probe.setOption(level: Int32(IPPROTO_IPV6), name: IPV6_V6ONLY, value: 1) }
        do {
            try probe.bind(to: self)
            return true
        } catch {
            return false
        }
    }
}
