internal import Primitives
internal import Synchronization

#if canImport(Glibc)
    internal import Glibc
#endif

/// The open connections, for the request-head watchdog.
///
/// A connection is removed in libmicrohttpd's connection-closed notification, which runs before
/// libmicrohttpd closes the socket; ``expire(waitingBefore:)`` shuts sockets down under the same lock,
/// so it can never touch a descriptor that was closed and reused.
final class ConnectionRegistry: Sendable {
    private let connections = Locked<[ObjectIdentifier: ConnectionState]>([:])

    func add(_ connection: ConnectionState) {
        connections.withLock { $0[ObjectIdentifier(connection)] = connection }
    }

    func remove(_ connection: ConnectionState) {
        _ = connections.withLock { $0.removeValue(forKey: ObjectIdentifier(connection)) }
    }

    /// Shuts down (not closes: libmicrohttpd owns the descriptor and closes it when it sees the end
    /// of the stream) every connection that has waited for a request head since before `deadline`.
    /// Returns how many it shut down.
    @discardableResult
    func expire(waitingBefore deadline: Int64) -> Int {
        connections.withLock { connections in
            var count = 0
            for connection in connections.values {
                let since = connection.waitingSince.load(ordering: .relaxed)
                guard since != ConnectionState.notWaiting, since < deadline else { continue }
                // Do not shut it down again on the next tick.
                connection.waitingSince.store(ConnectionState.notWaiting, ordering: .relaxed)
                Glibc.shutdown(connection.fd, Int32(SHUT_RDWR))
                count += 1
            }
            return count
        }
    }

    func removeAll() {
        connections.withLock { $0.removeAll() }
    }
}
