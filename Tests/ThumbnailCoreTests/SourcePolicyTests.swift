import Testing

@testable import ThumbnailCore

@Suite struct SourcePolicyTests {
    func cls(_ text: String) -> SourcePolicy.AddressClass { SourcePolicy.classify(IPAddress(text: text)!) }

    @Test func classifiesEveryNonPublicRange() {
        #expect(cls("127.0.0.1") == .loopback)
        #expect(cls("127.255.1.2") == .loopback)
        #expect(cls("::1") == .loopback)
        #expect(cls("10.1.2.3") == .private)
        #expect(cls("172.16.0.1") == .private)
        #expect(cls("172.31.255.255") == .private)
        #expect(cls("172.32.0.1") == .public)
        #expect(cls("192.168.1.1") == .private)
        #expect(cls("fd00::1") == .private)
        #expect(cls("fc00::1") == .private)
        #expect(cls("169.254.169.254") == .linkLocal)
        #expect(cls("fe80::1") == .linkLocal)
        #expect(cls("100.64.0.1") == .sharedCGNAT)
        #expect(cls("100.127.255.1") == .sharedCGNAT)
        #expect(cls("224.0.0.1") == .multicast)
        #expect(cls("ff02::1") == .multicast)
        #expect(cls("0.0.0.0") == .unspecified)
        #expect(cls("::") == .unspecified)
        #expect(cls("93.184.216.34") == .public)
        #expect(cls("2606:2800:220:1::1") == .public)
    }

    @Test func unwrapsIPv4HiddenInIPv6() {
        #expect(cls("::ffff:127.0.0.1") == .loopback)
        #expect(cls("::ffff:7f00:1") == .loopback)
        #expect(cls("::ffff:10.0.0.1") == .private)
        #expect(cls("::ffff:169.254.169.254") == .linkLocal)
        #expect(cls("::127.0.0.1") == .loopback)
        #expect(cls("64:ff9b::10.0.0.1") == .private)
        #expect(cls("2002:7f00:1::") == .loopback)
        #expect(cls("::ffff:93.184.216.34") == .public)
    }

    @Test func switchesAllowOnlyTheirOwnRanges() {
        let loopbackOnly = SourcePolicy(allowLoopback: true)
        #expect(loopbackOnly.allows(IPAddress(text: "127.0.0.1")!))
        #expect(loopbackOnly.allows(IPAddress(text: "::1")!))
        #expect(!loopbackOnly.allows(IPAddress(text: "10.0.0.1")!))
        let privateOnly = SourcePolicy(allowPrivate: true)
        #expect(privateOnly.allows(IPAddress(text: "10.0.0.1")!))
        #expect(!privateOnly.allows(IPAddress(text: "127.0.0.1")!))
        #expect(!privateOnly.allows(IPAddress(text: "169.254.169.254")!))
        #expect(!SourcePolicy().allows(IPAddress(text: "127.0.0.1")!))
    }

    @Test func checksLiteralsAndTheAllowlistBeforeConnecting() throws {
        #expect(throws: ThumbnailError.self) { try SourcePolicy().check(SourceURL(parsing: "http://127.0.0.1/x")) }
        #expect(throws: ThumbnailError.self) { try SourcePolicy().check(SourceURL(parsing: "http://[::ffff:a00:1]/x")) }
        let listed = SourcePolicy(allowedHosts: ["images.example.org", "*.cdn.example"])
        try listed.check(SourceURL(parsing: "https://images.example.org/a"))
        try listed.check(SourceURL(parsing: "https://eu.cdn.example/a"))
        #expect(throws: ThumbnailError.self) { try listed.check(SourceURL(parsing: "https://cdn.example/a")) }
        #expect(throws: ThumbnailError.self) { try listed.check(SourceURL(parsing: "https://evil.example/a")) }
    }

    @Test func parsesAddressText() {
        #expect(IPAddress(text: "1.2.3.4")?.bytes == [1, 2, 3, 4])
        #expect(IPAddress(text: "1.2.3") == nil)
        #expect(IPAddress(text: "1.2.3.256") == nil)
        #expect(IPAddress(text: "::")?.bytes == [UInt8](repeating: 0, count: 16))
        #expect(IPAddress(text: "1::2:3:4:5:6:7:8") == nil)
        #expect(IPAddress(text: "fe80::1%eth0") == nil)
    }
}
