internal import Primitives

#if canImport(Glibc)
    internal import Glibc
#endif

/// A blocking TCP client socket for ``TestHTTPClient``; its ``FileDescriptor`` is the only thing
/// that closes it.
final class TestSocket {
    private let descriptor: FileDescriptor
    private var fd: Int32 { descriptor.rawValue }

    init(host: String, port: Int) throws(TestHTTPClientError) {
        guard let address = SocketAddress(host: host, port: port) else { throw .invalidHost(host) }
        do {
            let descriptor = try FileDescriptor.tcpSocket(for: address)
            // On failure `descriptor` closes the socket as it goes out of scope, once.
            try descriptor.connect(to: address)
            self.descriptor = descriptor
        } catch {
            throw .connectFailed(errno: error.code)
        }
    }

    /// Sends everything; false if the peer is gone.
    func send(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
            }
            if sent < 0 && errno == EINTR { continue }
            guard sent > 0 else { return false }
            offset += sent
        }
        return true
    }

    /// Appends what arrives until `deadline`, or until `enough` says the bytes so far suffice.
    /// Returns false when the peer closed (end of stream or reset), true when the deadline passed or
    /// `enough` was satisfied first.
    func receive(
        into received: inout [UInt8], until deadline: ContinuousClock.Instant,
        enough: ([UInt8]) -> Bool = { _ in false }
    ) -> Bool {
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            if enough(received) { return true }
            let remaining = ContinuousClock.now.duration(to: deadline)
            if remaining <= .zero { return true }
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, Int32(clamping: remaining.roundedUp(to: .milliseconds(1))))
            if ready < 0 && errno == EINTR { continue }
            if ready == 0 { continue }
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { return false }
            received += buffer[0..<count]
        }
    }
}
