import Foundation
internal import Primitives
import Synchronization

/// One line per request on standard error, logfmt:
/// `ts=… id=… method=GET route=/thumb status=200 bytes=1234 ms=3.1 cache=hit`.
/// Lines are appended to a buffer and written by one background thread — every 200 ms, or
/// sooner when the buffer passes 64 KiB — so no request ever waits for a write. If standard
/// error stalls and 8 MiB pile up, further lines are dropped and counted (never unbounded).
public final class RequestLog: Sendable {
    private let buffer = Mutex<[UInt8]>([])
    private let enabled: Bool
    /// True when a full buffer asks the writer to flush now, not at its next tick.
    private let wake = Monitor(false)
    private let signalled = Atomic<Bool>(false)
    private let dropped = Atomic<Int>(0)
    private static let flushThreshold = 64 << 10
    private static let maxBuffered = 8 << 20
    /// Longest line: a client's method and id are cut short before this, an error text may be cut.
    static let lineCapacity = 1024

    public init(enabled: Bool) {
        self.enabled = enabled
        guard enabled else { return }
        // Holds the log weakly: the thread ends within a tick of the log's last reference going.
        do {
            try DetachedThread.start(name: "thumbd-log", stackSize: 256 << 10) { [weak self] in
                var spare: [UInt8] = []
                while let log = self {
                    spare = log.write(log.take(reusing: spare))
                    let wake = log.wake
                    wake.wait(until: { $0 }, timeout: .milliseconds(200)) { $0 = false }
                }
            }
        } catch {
            // At start-up: a process that cannot start a thread cannot serve either.
            fatalError("thumbd: cannot start the log writer: \(error)")
        }
    }

    public struct Entry: Sendable {
        public var requestID: RequestID
        public var method: String
        public var route: String
        public var status: Int
        public var bytes: Int
        public var startNanos: UInt64
        public var cache: String
        public var error: String?
    }

    /// Formats the line on the stack and copies it into the shared buffer under the lock (no
    /// intermediate strings: this runs for every hit, tens of thousands of times a second).
    public func record(_ entry: Entry) {
        guard enabled else { return }
        let elapsedMicros = (DispatchTime.now().uptimeNanoseconds &- entry.startNanos) / 1000
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let size = LogLine.withScratch(capacity: Self.lineCapacity) { line -> Int in
            line.append("ts=")
            line.appendDecimal(UInt64(now.tv_sec))
            line.append(UInt8(ascii: "."))
            line.appendDecimal(UInt64(now.tv_nsec / 1_000_000), width: 3)
            line.append(" id=")
            entry.requestID.append(to: &line)
            line.append(" method=")
            line.append(Self.clean(entry.method))
            line.append(" route=")
            line.append(entry.route)
            line.append(" status=")
            line.appendDecimal(UInt64(max(0, entry.status)))
            line.append(" bytes=")
            line.appendDecimal(UInt64(max(0, entry.bytes)))
            line.append(" ms=")
            line.appendDecimal(elapsedMicros / 1000)
            line.append(UInt8(ascii: "."))
            line.appendDecimal(elapsedMicros / 100 % 10)
            line.append(" cache=")
            line.append(entry.cache)
            if let error = entry.error {
                line.append(" error=")
                line.append(JSON.string(error))
            }
            let finished = line.finished()
            return buffer.withLock { buffer -> Int in
                guard buffer.count < Self.maxBuffered else { return -1 }
                buffer.append(contentsOf: finished)
                return buffer.count
            }
        }
        if size < 0 {
            dropped.add(1, ordering: .relaxed)
        } else if size > Self.flushThreshold, !signalled.exchange(true, ordering: .relaxed) {
            wake.withLock { $0 = true }
        }
    }

    /// A message that is not about one request (start, stop).
    public func event(_ text: String) {
        buffer.withLock {
            $0.append(contentsOf: "ts=\(Self.timestamp()) event=\(JSON.string(text))\n".utf8)
        }
        flush()
    }

    /// Writes out everything buffered (on the caller's thread).
    public func flush() {
        _ = write(take(reusing: []))
    }

    /// Swaps the buffer for an empty one (`spare`'s storage, reused): no copy under the lock.
    private func take(reusing spare: [UInt8]) -> [UInt8] {
        var pending = spare
        pending.removeAll(keepingCapacity: true)
        signalled.store(false, ordering: .relaxed)
        buffer.withLock { swap(&$0, &pending) }
        let lost = dropped.exchange(0, ordering: .relaxed)
        if lost > 0 { pending.append(contentsOf: "ts=\(Self.timestamp()) event=\"dropped \(lost) log lines\"\n".utf8) }
        return pending
    }

    /// Writes `bytes` to standard error and hands the array back for reuse.
    private func write(_ bytes: [UInt8]) -> [UInt8] {
        bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let written = Glibc.write(2, raw.baseAddress! + offset, raw.count - offset)
                if written <= 0 { break }
                offset += written
            }
        }
        return bytes
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
