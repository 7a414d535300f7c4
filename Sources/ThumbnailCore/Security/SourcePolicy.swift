/// Which sources may be fetched: checked on every URL (redirect hops included) and on the
/// resolved address of every connection, at connect time (so DNS tricks cannot get around it).
public struct SourcePolicy: Sendable {
    /// Address classes that are never public.
    public enum AddressClass: String, Sendable {
        case `public`, loopback, `private`, linkLocal, sharedCGNAT, multicast, unspecified, reserved
    }

    /// Allows loopback (127/8, ::1) only: tests and local development.
    public var allowLoopback: Bool
    /// Allows private (10/8, 172.16/12, 192.168/16, fc00::/7) and CGNAT (100.64/10) addresses.
    /// Link-local (169.254/16 — cloud metadata — and fe80::/10) stays refused whatever is set.
    public var allowPrivate: Bool
    /// When non-empty, the only hosts that may be fetched: "example.org" matches that host,
    /// "*.example.org" its subdomains.
    public var allowedHosts: [String]

    public init(allowLoopback: Bool = false, allowPrivate: Bool = false, allowedHosts: [String] = []) {
        self.allowLoopback = allowLoopback
        self.allowPrivate = allowPrivate
        self.allowedHosts = allowedHosts.map { $0.lowercased() }
    }

    /// The URL check, before any connection (and again for each redirect target).
    public func check(_ url: SourceURL) throws(ThumbnailError) {
        if !allowedHosts.isEmpty && !allowedHosts.contains(where: { Self.host(url.host, matches: $0) }) {
            throw ThumbnailError(.sourceNotAllowed, "host \(url.host) is not on the allowlist")
        }
        // A literal address is checked now too, so a refusal is immediate and obvious.
        if let address = IPAddress(text: url.host), !allows(address) {
            throw ThumbnailError(.sourceNotAllowed, "address \(address) is \(Self.classify(address).rawValue)")
        }
    }

    /// The connect-time check of a resolved address.
    public func allows(_ address: IPAddress) -> Bool {
        switch Self.classify(address) {
        case .public: true
        case .loopback: allowLoopback
        case .private, .sharedCGNAT: allowPrivate
        case .linkLocal, .multicast, .unspecified, .reserved: false
        }
    }

    static func host(_ host: String, matches pattern: String) -> Bool {
        if pattern.hasPrefix("*.") { return host.hasSuffix(pattern.dropFirst(1)) }
        return host == pattern
    }

    /// Classifies an address; IPv4 hidden in IPv6 (mapped, compatible, NAT64, 6to4) is unwrapped.
    public static func classify(_ address: IPAddress) -> AddressClass {
        let b = address.bytes
        if b.count == 4 { return classifyIPv4(b) }
        if let embedded = embeddedIPv4(b) { return classifyIPv4(embedded) }
        if b.allSatisfy({ $0 == 0 }) { return .unspecified }
        if b[0..<15].allSatisfy({ $0 == 0 }) && b[15] == 1 { return .loopback }
        if b[0] & 0xFE == 0xFC { return .private }  // fc00::/7
        if b[0] == 0xFE && b[1] & 0xC0 == 0x80 { return .linkLocal }  // fe80::/10
        if b[0] == 0xFE && b[1] & 0xC0 == 0xC0 { return .reserved }  // fec0::/10, deprecated site-local
        if b[0] == 0xFF { return .multicast }
        if b[0] == 0x20 && b[1] == 0x01 && b[2] == 0x0D && b[3] == 0xB8 { return .reserved }  // documentation
        if b[0] == 0x01 && b[1...7].allSatisfy({ $0 == 0 }) { return .reserved }  // 100::/64 discard
        return .public
    }

    /// The IPv4 address inside ::ffff:a.b.c.d, ::a.b.c.d, 64:ff9b::a.b.c.d and 2002:aabb:ccdd::.
    static func embeddedIPv4(_ b: [UInt8]) -> [UInt8]? {
        if b[0..<10].allSatisfy({ $0 == 0 }) && b[10] == 0xFF && b[11] == 0xFF { return Array(b[12..<16]) }
        if b[0..<12].allSatisfy({ $0 == 0 }) && !(b[12] == 0 && b[13] == 0 && b[14] == 0 && b[15] <= 1) {
            return Array(b[12..<16])
        }
        if b[0] == 0x00 && b[1] == 0x64 && b[2] == 0xFF && b[3] == 0x9B && b[4..<12].allSatisfy({ $0 == 0 }) {
            return Array(b[12..<16])
        }
        if b[0] == 0x20 && b[1] == 0x02 { return Array(b[2..<6]) }
        return nil
    }

    static func classifyIPv4(_ b: [UInt8]) -> AddressClass {
        switch (b[0], b[1]) {
        case (0, _): return .unspecified
        case (127, _): return .loopback
        case (10, _): return .private
        case (172, 16...31): return .private
        case (192, 168): return .private
        case (169, 254): return .linkLocal
        case (100, 64...127): return .sharedCGNAT
        case (224...239, _): return .multicast
        case (240...255, _): return .reserved
        case (192, 0) where b[2] == 0 || b[2] == 2: return .reserved  // IETF protocol assignments, TEST-NET-1
        case (198, 18...19): return .reserved  // benchmarking
        case (198, 51) where b[2] == 100: return .reserved
        case (203, 0) where b[2] == 113: return .reserved
        default: return .public
        }
    }
}
