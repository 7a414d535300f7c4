import Foundation
internal import Primitives
import Synchronization

/// Where finished log bytes go: standard error unless a test captures them. Called by one thread at
/// a time (the writer, or a caller of `flush`), with whole lines.
public typealias LogSink = @Sendable (UnsafeRawBufferPointer) -> Void

/// One line per request on standard error, logfmt
/// (`ts=… id=… method=GET route=/thumb status=200 bytes=1234 ms=3.1 cache=hit`) or, with
/// `--log-format json`, one JSON object with the same fields; service events (`LogEvent`) in the
/// same format. Lines are appended to a buffer and written by one background thread — every
/// 200 ms, or sooner when the buffer passes 64 KiB — so no request ever waits for a write. If
/// standard error stalls and 8 MiB pile up, further lines are dropped and counted (never unbounded).
public final class RequestLog: Sendable {
    private let buffer = Locked<[UInt8]>([])
    private let enabled: Bool
    private let format: LogFormat
    private let sink: LogSink
    /// Held from taking the buffer to the end of writing it: the writer thread and `flush` callers
    /// (events) both write, and lines must reach the sink in the order they were buffered. Its
    /// state is the array last written, kept so its storage becomes the next empty buffer.
    private let writing = Locked<[UInt8]>([])
    /// True when a full buffer asks the writer to flush now, not at its next tick.
    private let wake = Monitor(false)
    private let signalled = Atomic<Bool>(false)
    private let dropped = Atomic<Int>(0)
    private static let flushThreshold = 64 << 10
    private static let maxBuffered = 8 << 20
    /// Longest line: a client's method and id are cut short before this, an error text may be cut.
    static let lineCapacity = 1024

    /// `sink` nil: standard error.
    public init(enabled: Bool, format: LogFormat = .logfmt, sink: LogSink? = nil) {
        self.enabled = enabled
        self.format = format
        self.sink = sink ?? Self.standardError
        guard enabled else { return }
        // Holds the log weakly: the thread ends within a tick of the log's last reference going.
        do {
            try DetachedThread.start(name: "thumbd-log", stackSize: 256 << 10) { [weak self] in
                while let log = self {
                    log.writeOut()
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
        /// From the request's arrival to its answer, on the monotonic clock (the caller reads it
        /// once for this line and the request's metrics).
        public var elapsedNanos: UInt64
        public var cache: String
        public var error: String?
    }

    /// Formats the line on the stack and copies it into the shared buffer under the lock (no
    /// intermediate strings: this runs for every hit, tens of thousands of times a second).
    public func record(_ entry: Entry) {
        guard enabled else { return }
        let elapsedMicros = entry.elapsedNanos / 1000
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let size = LogLine.withScratch(capacity: Self.lineCapacity) { line -> Int in
            switch format {
            case .logfmt: Self.logfmt(entry, &line, seconds: now.tv_sec, nanos: now.tv_nsec, micros: elapsedMicros)
            case .json: Self.json(entry, &line, seconds: now.tv_sec, nanos: now.tv_nsec, micros: elapsedMicros)
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

    /// `ts=… id=… method=… route=… status=… bytes=… ms=… cache=…[ error="…"]`
    private static func logfmt(
        _ entry: Entry, _ line: inout LogLine, seconds: Int, nanos: Int, micros: UInt64
    ) {
        line.append("ts=")
        appendTimestamp(&line, seconds: seconds, nanos: nanos)
        line.append(" id=")
        entry.requestID.append(to: &line)
        line.append(" method=")
        line.append(clean(entry.method))
        line.append(" route=")
        line.append(entry.route)
        line.append(" status=")
        line.appendDecimal(UInt64(max(0, entry.status)))
        line.append(" bytes=")
        line.appendDecimal(UInt64(max(0, entry.bytes)))
        line.append(" ms=")
        appendMilliseconds(&line, micros: micros)
        line.append(" cache=")
        line.append(entry.cache)
        if let error = entry.error {
            line.append(" error=")
            line.appendQuoted(error)
        }
    }

    /// `{"ts":…,"id":"…","method":"…","route":"…","status":…,"bytes":…,"ms":…,"cache":"…"[,"error":"…"]}`:
    /// the logfmt line's fields, as cheap. The id, method, route and cache outcome are plain by
    /// construction (`RequestIDs` keeps only plain client ids, `clean` the method, the rest are
    /// ours); only the error text needs escaping, and it is cut, if need be, before the `}`.
    private static func json(
        _ entry: Entry, _ line: inout LogLine, seconds: Int, nanos: Int, micros: UInt64
    ) {
        line.append("{\"ts\":")
        appendTimestamp(&line, seconds: seconds, nanos: nanos)
        line.append(",\"id\":\"")
        entry.requestID.append(to: &line)
        line.append("\",\"method\":\"")
        line.append(clean(entry.method))
        line.append("\",\"route\":\"")
        line.append(entry.route)
        line.append("\",\"status\":")
        line.appendDecimal(UInt64(max(0, entry.status)))
        line.append(",\"bytes\":")
        line.appendDecimal(UInt64(max(0, entry.bytes)))
        line.append(",\"ms\":")
        appendMilliseconds(&line, micros: micros)
        line.append(",\"cache\":\"")
        line.append(entry.cache)
        line.append(UInt8(ascii: "\""))
        if let error = entry.error {
            line.append(",\"error\":")
            line.appendQuoted(error, reserving: 1)
        }
        line.append(UInt8(ascii: "}"))
    }

    /// Unix seconds with milliseconds: `1795984601.533` (a number in JSON too).
    private static func appendTimestamp(_ line: inout LogLine, seconds: Int, nanos: Int) {
        line.appendDecimal(UInt64(seconds))
        line.append(UInt8(ascii: "."))
        line.appendDecimal(UInt64(nanos / 1_000_000), width: 3)
    }

    /// Elapsed milliseconds with one decimal: `3.1`.
    private static func appendMilliseconds(_ line: inout LogLine, micros: UInt64) {
        line.appendDecimal(micros / 1000)
        line.append(UInt8(ascii: "."))
        line.appendDecimal(micros / 100 % 10)
    }

    /// A service event (start, settings, drain, stop, a breaker), in the log's format, written at
    /// once (on the caller's thread) with whatever request lines were buffered before it.
    public func event(_ event: LogEvent) {
        let text = event.line(format, timestamp: Self.timestamp())
        buffer.withLock { $0.append(contentsOf: text.utf8) }
        flush()
    }

    /// Writes out everything buffered (on the caller's thread).
    public func flush() {
        writeOut()
    }

    /// Takes what is buffered and hands it to the sink.
    private func writeOut() {
        writing.withLock { written in
            var spare: [UInt8] = []
            swap(&spare, &written)  // the only reference, so its storage is reused, not copied
            written = take(reusing: spare)
            if !written.isEmpty { written.withUnsafeBytes { sink($0) } }
        }
    }

    /// Swaps the buffer for an empty one (`spare`'s storage, reused): no copy under the lock.
    private func take(reusing spare: [UInt8]) -> [UInt8] {
        var pending = spare
        pending.removeAll(keepingCapacity: true)
        signalled.store(false, ordering: .relaxed)
        buffer.withLock { swap(&$0, &pending) }
        let lost = dropped.exchange(0, ordering: .relaxed)
        if lost > 0 {
            let event = LogEvent(
                "dropped", "dropped \(lost) log lines: standard error did not keep up", [("lines", .int(lost))])
            pending.append(contentsOf: event.line(format, timestamp: Self.timestamp()).utf8)
        }
        return pending
    }

    private static let standardError: LogSink = { raw in
        var offset = 0
        while offset < raw.count {
            let written = Glibc.write(2, raw.baseAddress! + offset, raw.count - offset)
            if written <= 0 { break }
            offset += written
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
