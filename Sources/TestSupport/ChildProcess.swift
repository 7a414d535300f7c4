internal import Glibc
internal import Primitives

/// A program a test starts (gzip, promtool, flock, the reference Python, the `thumbd` binary),
/// through `posix_spawn`.
///
/// Why not Foundation's `Process`: on Linux its `run()` copies the whole 256-byte `d_name` of
/// each `/proc/self/fd` entry out of glibc's `readdir` buffer, which can read past the buffer's
/// end (swift-corelibs-foundation PR #5472; Swift 6.3.1 has the bug). CI's test process, with
/// about 1,400 descriptors open and reference decoders started from several threads at once,
/// died of SIGSEGV in `Process.run`. This reads the entry's name only up to its NUL.
///
/// As `Process` does, the child gets only descriptors 0, 1 and 2 (every other one is closed
/// before the program starts), a process group of its own, and here also an empty signal mask
/// with the default action for the signals a test sends, whatever the test process blocks.
public final class ChildProcess: Sendable {
    /// Where one of the child's standard streams goes.
    public enum Stream: Sendable {
        /// `/dev/null`.
        case null
        /// A descriptor of the test process, which keeps it (the child gets a copy).
        case descriptor(Int32)
    }

    /// How the child ended.
    public enum Termination: Equatable, Sendable {
        case exited(Int32)
        case signalled(Int32)

        /// The exit code, or 128 + the signal, as a shell reports it.
        public var status: Int32 {
            switch self {
            case .exited(let code): code
            case .signalled(let signal): 128 + signal
            }
        }
    }

    /// What `run` collected.
    public struct Outcome: Sendable {
        public let termination: Termination
        public let output: [UInt8]
        public let errors: [UInt8]

        /// The exit code, or 128 + the signal.
        public var status: Int32 { termination.status }
        public var outputText: String { String(decoding: output, as: UTF8.self) }
        public var errorsText: String { String(decoding: errors, as: UTF8.self) }
    }

    public let pid: Int32
    /// Set once the child is reaped, by whichever of `wait` and `isRunning` reaps it.
    private let ended = Locked<Termination?>(nil)

    /// Starts `program` (a path) with `arguments`, and `environment` (the test process's own when
    /// nil). Throws the `posix_spawn` error.
    public init(
        _ program: String, _ arguments: [String], environment: [String: String]? = nil,
        input: Stream = .null, output: Stream = .null, errors: Stream = .null
    ) throws {
        let null = open("/dev/null", O_RDWR | O_CLOEXEC)
        guard null >= 0 else { throw SystemError(operation: "open /dev/null", code: errno) }
        let nullOwner = FileDescriptor(adopting: null)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (target, stream) in [(Int32(0), input), (1, output), (2, errors)] {
            let source: Int32 =
                switch stream {
                case .null: null
                case .descriptor(let descriptor): descriptor
                }
            posix_spawn_file_actions_adddup2(&actions, source, target)
        }
        // After the copies: a close of a descriptor closed meanwhile is ignored by glibc.
        for descriptor in Self.openDescriptors() where descriptor > 2 {
            posix_spawn_file_actions_addclose(&actions, descriptor)
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGHUP, SIGINT, SIGQUIT, SIGPIPE, SIGTERM] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(
            &attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP))

        let argv = Self.cStrings([program] + arguments)
        defer { Self.free(argv) }
        let envp = environment.map { Self.cStrings($0.map { "\($0)=\($1)" }) }
        defer { envp.map(Self.free) }
        var pid = pid_t()
        let result = posix_spawn(&pid, program, &actions, &attributes, argv, envp ?? environ)
        withExtendedLifetime(nullOwner) {}
        guard result == 0 else { throw SystemError(operation: "posix_spawn \(program)", code: result) }
        self.pid = pid
    }

    /// Sends `signal` to the child (unless it has been reaped: its number may be reused).
    public func signal(_ signal: Int32) {
        ended.withLock { if $0 == nil { _ = kill(pid, signal) } }
    }

    /// Whether the child has not ended yet; reaps it if it has.
    public var isRunning: Bool {
        ended.withLock {
            if $0 != nil { return false }
            var status: Int32 = 0
            guard waitpid(pid, &status, WNOHANG) == pid else { return true }
            $0 = Self.termination(status)
            return false
        }
    }

    /// Waits for the child to end (blocking: off the cooperative pool).
    @discardableResult
    public func wait() -> Termination {
        if let done = ended.withLock({ $0 }) { return done }
        var status: Int32 = 0
        var result: pid_t
        repeat { result = waitpid(pid, &status, 0) } while result < 0 && errno == EINTR
        return ended.withLock {
            // ECHILD: `isRunning` reaped it meanwhile, and stored how, under this lock.
            if result == pid { $0 = Self.termination(status) }
            return $0 ?? .exited(-1)
        }
    }

    /// Runs `program` to its end on a thread of its own, with `input` on its standard input;
    /// what it wrote (its standard error into `output` too, when `mergeErrors`). The streams go
    /// through unlinked temporary files: no pipe can fill while nobody reads it.
    public static func run(
        _ program: String, _ arguments: [String], environment: [String: String]? = nil, input: [UInt8] = [],
        mergeErrors: Bool = false
    ) async throws -> Outcome {
        try await withCheckedThrowingContinuation { continuation in
            do {
                try DetachedThread.start(name: "child-process", stackSize: 512 << 10) {
                    continuation.resume(
                        with: Result {
                            try runHere(
                                program, arguments, environment: environment, input: input, mergeErrors: mergeErrors)
                        })
                }
            } catch {
                continuation.resume(throwing: error)
            }
        }
    }

    /// `run` on the calling thread, which it blocks until the program ends: for quick programs
    /// (gzip, `ld.so --list-tunables`) called from synchronous code.
    public static func runHere(
        _ program: String, _ arguments: [String], environment: [String: String]? = nil, input: [UInt8] = [],
        mergeErrors: Bool = false
    ) throws -> Outcome {
        let stdin = try temporaryFile(holding: input)
        let stdout = try temporaryFile(holding: [])
        let stderr = mergeErrors ? stdout : try temporaryFile(holding: [])
        let child = try ChildProcess(
            program, arguments, environment: environment, input: .descriptor(stdin.rawValue),
            output: .descriptor(stdout.rawValue), errors: .descriptor(stderr.rawValue))
        let termination = child.wait()
        withExtendedLifetime(stdin) {}
        return Outcome(
            termination: termination, output: try readAll(stdout), errors: mergeErrors ? [] : try readAll(stderr))
    }

    /// One read of up to 64 KiB from `descriptor` (a pipe from a child, say); empty at its end
    /// or on an error.
    public static func readSome(_ descriptor: Int32) -> [UInt8] {
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            return count > 0 ? Array(chunk[0..<count]) : []
        }
    }

    /// The descriptors open in this process, from `/proc/self/fd`; each name read only up to
    /// its NUL (the point of this type).
    private static func openDescriptors() -> [Int32] {
        guard let directory = opendir("/proc/self/fd") else { return [] }
        defer { closedir(directory) }
        let nameOffset = MemoryLayout<dirent>.offset(of: \dirent.d_name)!
        var descriptors: [Int32] = []
        while let entry = readdir(directory) {
            let name = (UnsafeRawPointer(entry) + nameOffset).assumingMemoryBound(to: CChar.self)
            if let descriptor = Int32(String(cString: name)) { descriptors.append(descriptor) }
        }
        return descriptors
    }

    /// A new unlinked file in the temporary folder holding `bytes`, at offset 0.
    private static func temporaryFile(holding bytes: [UInt8]) throws(SystemError) -> FileDescriptor {
        var template = Array("/tmp/thumbd-child-XXXXXX".utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard descriptor >= 0 else { throw SystemError(operation: "mkstemp", code: errno) }
        let file = FileDescriptor(adopting: descriptor)
        _ = template.withUnsafeBufferPointer { unlink($0.baseAddress!) }
        var offset = 0
        while offset < bytes.count {
            let count = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress! + offset, $0.count - offset) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { throw SystemError(operation: "write", code: errno) }
            offset += count
        }
        guard lseek(descriptor, 0, SEEK_SET) == 0 else { throw SystemError(operation: "lseek", code: errno) }
        return file
    }

    private static func readAll(_ file: FileDescriptor) throws(SystemError) -> [UInt8] {
        guard lseek(file.rawValue, 0, SEEK_SET) == 0 else { throw SystemError(operation: "lseek", code: errno) }
        var bytes: [UInt8] = []
        while case let chunk = readSome(file.rawValue), !chunk.isEmpty { bytes.append(contentsOf: chunk) }
        return bytes
    }

    private static func termination(_ status: Int32) -> Termination {
        // WIFEXITED / WEXITSTATUS / WTERMSIG, which Swift does not import (macros).
        status & 0x7f == 0 ? .exited((status >> 8) & 0xff) : .signalled(status & 0x7f)
    }

    private static func cStrings(_ strings: [String]) -> UnsafeMutablePointer<UnsafeMutablePointer<CChar>?> {
        let array = UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>.allocate(capacity: strings.count + 1)
        for (index, string) in strings.enumerated() { array[index] = strdup(string) }
        array[strings.count] = nil
        return array
    }

    private static func free(_ array: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) {
        var index = 0
        while let string = array[index] {
            Glibc.free(string)
            index += 1
        }
        array.deallocate()
    }
}
