import Primitives
import Testing

@Suite struct SocketAddressTests {
    @Test func parsesLiteralsOnly() throws {
        let v4 = try #require(SocketAddress(host: "127.0.0.1", port: 8080))
        #expect(v4.family == .ipv4)
        #expect(v4.bytes == [127, 0, 0, 1])
        #expect(v4.port == 8080)
        #expect(v4.description == "127.0.0.1:8080")
        let v6 = try #require(SocketAddress(host: "::1", port: 0))
        #expect(v6.family == .ipv6)
        #expect(v6.bytes == Array(repeating: 0, count: 15) + [1])
        #expect(v6.description == "[::1]:0")
        #expect(SocketAddress(host: "localhost", port: 80) == nil)
        #expect(SocketAddress(host: "[::1]", port: 80) == nil)
        #expect(SocketAddress(host: "127.0.0.1", port: 65536) == nil)
        #expect(SocketAddress(host: "127.0.0.1", port: -1) == nil)
        #expect(v4.with(port: 9) == SocketAddress(host: "127.0.0.1", port: 9))
    }

    @Test func bindsAndReadsBackTheEphemeralPort() throws {
        let address = try #require(SocketAddress(host: "127.0.0.1", port: 0))
        let socket = try FileDescriptor.tcpSocket(for: address)
        try socket.bind(to: address)
        try socket.listen()
        let bound = try socket.localAddress()
        #expect(bound.family == .ipv4)
        #expect(bound.port > 0)
        // A client connects to what was read back.
        let client = try FileDescriptor.tcpSocket(for: bound)
        try client.connect(to: bound)
    }
}
