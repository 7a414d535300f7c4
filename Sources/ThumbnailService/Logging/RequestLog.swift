import Foundation
import Synchronization

/// One line per request on standard error, logfmt:
/// `ts=… id=… method=GET route=/thumb status=200 bytes=1234 ms=3.1 cache=hit`.
/// Lines are buffered and written by one background flush (or when the buffer fills), so the hit
/// path never makes a syscall for logging.
public final class RequestLog: Sendable {
    private let buffer = Mutex<[UInt8]>([])
    private let enabled: Bool
    private static let flushThreshold = 32 << 10

    public init(enabled: Bool) {
        self.enabled = enabled
        guard enabled else { return }
        let thread = Thread { [weak self] in
            while let self {
                self.flush()
                Thread.sleep(forTimeInterval: 0.2)
            }
        }
        thread.name = "thumbd-log"
        thread.start()
    }

    public struct Entry: Sendable {
        public var requestID: String
        public var method: String
        public var route: String
        public var status: Int
        public var bytes: Int
        public var startNanos: UInt64
        public var cache: String
        public var error: String?
    }

    public func record(_ entry: Entry) {
        guard enabled else { return }
        let elapsedMicros = (DispatchTime.now().uptimeNanoseconds &- entry.startNanos) / 1000
        let ms = "\(elapsedMicros / 1000).\(elapsedMicros / 100 % 10)"
        var line = "ts=\(Self.timestamp()) id=\(entry.requestID) method=\(Self.clean(entry.method))"
        line += " route=\(entry.route) status=\(entry.status) bytes=\(entry.bytes) ms=\(ms) cache=\(entry.cache)"
        if let error = entry.error { line += " error=\(JSON.string(error))" }
        line += "\n"
        let full = buffer.withLock { buffer -> Bool in
            buffer.append(contentsOf: line.utf8)
            return buffer.count > Self.flushThreshold
        }
        if full { flush() }
    }

    /// A message that is not about one request (start, stop).
    public func event(_ text: String) {
        buffer.withLock {
            $0.append(contentsOf: "ts=\(Self.timestamp()) event=\(JSON.string(text))\n".utf8)
        }
        flush()
    }

    public func flush() {
        let pending = buffer.withLock { buffer -> [UInt8] in
            defer { buffer.removeAll(keepingCapacity: true) }
            return buffer
        }
        guard !pending.isEmpty else { return }
        pending.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let written = write(2, raw.baseAddress! + offset, raw.count - offset)
                if written <= 0 { break }
                offset += written
            }
        }
    }

    /// Unix time with milliseconds ("1795984601.533"), without Foundation's Date on the hot path.
    static func timestamp() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let millis = now.tv_nsec / 1_000_000
        return "\(now.tv_sec)." + (millis < 10 ? "00" : millis < 100 ? "0" : "") + "\(millis)"
    }

    /// Method names come from clients: keep them short and printable in the log.
    static func clean(_ text: String) -> String {
        if text == "GET" || text == "HEAD" || text == "POST" { return text }
        return String(text.prefix(16).map { $0.isASCII && ($0.isLetter || $0.isNumber) ? $0 : "?" })
    }
}
