internal import Glibc

/// The socket calls that take a ``SocketAddress``, so no caller handles `sockaddr` lengths or
/// casts itself. Each throws the `errno` of the failed call.
extension FileDescriptor {
    /// A new TCP socket for `address`'s family, close-on-exec.
    public static func tcpSocket(for address: SocketAddress) throws(SystemError) -> FileDescriptor {
        try socket(family: address.socketFamily, type: Int32(SOCK_STREAM.rawValue))
    }

    /// Sets an `Int32` socket option (`SO_REUSEADDR`, `IPV6_V6ONLY`, …).
    public func setOption(level: Int32, name: Int32, value: Int32) throws(SystemError) {
        var value = value
        guard setsockopt(rawValue, level, name, &value, socklen_t(MemoryLayout<Int32>.size)) == 0 else {
            throw SystemError(operation: "setsockopt", code: errno)
        }
    }

    public func bind(to address: SocketAddress) throws(SystemError) {
        let result = address.withSockaddrPointer { Glibc.bind(rawValue, $0, $1) }
        guard result == 0 else { throw SystemError(operation: "bind", code: errno) }
    }

    public func listen(backlog: Int32 = 128) throws(SystemError) {
        guard Glibc.listen(rawValue, backlog) == 0 else { throw SystemError(operation: "listen", code: errno) }
    }

    /// A blocking connect (retried on `EINTR` by waiting for the connection to complete).
    public func connect(to address: SocketAddress) throws(SystemError) {
        let result = address.withSockaddrPointer { Glibc.connect(rawValue, $0, $1) }
        guard result != 0 else { return }
        let failure = errno
        guard failure == EINTR else { throw SystemError(operation: "connect", code: failure) }
        // An interrupted connect goes on in the background: wait for it, then read its outcome.
        var descriptor = pollfd(fd: rawValue, events: Int16(POLLOUT), revents: 0)
        while poll(&descriptor, 1, -1) < 0 {
            guard errno == EINTR else { throw SystemError(operation: "poll", code: errno) }
        }
        var error: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        _ = getsockopt(rawValue, SOL_SOCKET, SO_ERROR, &error, &length)
        guard error == 0 else { throw SystemError(operation: "connect", code: error) }
    }

    /// The address the socket is bound to (`getsockname`): how an ephemeral port is read back.
    public func localAddress() throws(SystemError) -> SocketAddress {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let result = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(rawValue, $0, &length) }
        }
        guard result == 0 else { throw SystemError(operation: "getsockname", code: errno) }
        let address = withUnsafeBytes(of: storage) { SocketAddress($0.baseAddress!, length: Int(length)) }
        guard let address else { throw SystemError(operation: "getsockname", code: EAFNOSUPPORT) }
        return address
    }
}
