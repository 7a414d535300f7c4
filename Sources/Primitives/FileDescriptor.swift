#if canImport(Glibc)
    internal import Glibc
#endif

/// The one owner of an open file descriptor: it closes the descriptor exactly once, in `deinit`,
/// and nothing else in the tree calls `close`.
///
/// Why a class and not a bare `Int32`: a descriptor number is reused by the kernel as soon as it
/// is closed, so a second `close` of the same number closes whatever another thread opened in
/// between (a libmicrohttpd connection, say, which then aborts the process when its own `close`
/// fails). Making `deinit` the only place that closes rules out a close on an error path followed by
/// another in `deinit` (the way a throwing `init` goes wrong: Swift runs `deinit` once every stored
/// property is set). swift-nio's `BaseSocket` does the same.
///
/// Keep the owner alive (`withExtendedLifetime`) for as long as ``rawValue`` is in use: Swift may
/// release an object after its last use, not at the end of the scope.
///
/// Descriptors handed to libmicrohttpd or libcurl belong to the library and are never wrapped here,
/// except a listening socket that `MHD_quiesce_daemon` hands back.
public final class FileDescriptor: Sendable {
    /// The descriptor number; valid while this object lives.
    public let rawValue: Int32

    /// Takes ownership of an open descriptor (`rawValue >= 0`).
    public init(adopting rawValue: Int32) {
        precondition(rawValue >= 0, "FileDescriptor adopts only open descriptors")
        self.rawValue = rawValue
    }

    deinit {
        // EINTR on Linux still closes the descriptor: never retry (that could close a reused number).
        _ = Glibc.close(rawValue)
    }

    /// A new socket, close-on-exec (so child processes never inherit it). Throws the `errno`.
    public static func socket(family: Int32, type: Int32, protocol: Int32 = 0) throws(SystemError) -> FileDescriptor {
        let fd = Glibc.socket(family, type | Int32(SOCK_CLOEXEC.rawValue), `protocol`)
        guard fd >= 0 else { throw SystemError(operation: "socket", code: errno) }
        return FileDescriptor(adopting: fd)
    }
}
