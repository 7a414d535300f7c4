import Foundation
import Primitives
import TestSupport

@testable import ThumbnailService

/// A log sink that keeps what the service writes, for assertions on log lines.
final class LogCapture: Sendable {
    private let bytes = Locked<[UInt8]>([])

    var sink: LogSink {
        { [self] raw in bytes.withLock { $0.append(contentsOf: raw) } }
    }

    /// Every complete line so far (without its newline).
    var lines: [String] {
        let text = String(decoding: bytes.withLock { $0 }, as: UTF8.self)
        var lines = text.components(separatedBy: "\n")
        lines.removeLast()  // after the last newline: empty, or a line not finished yet
        return lines
    }

    /// Each line parsed as a JSON object; a line that is not one is recorded as an issue by the caller.
    var objects: [[String: Any]?] {
        lines.map { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    /// Waits (bounded) until `log` has written a line that satisfies `match`; returns it. Request
    /// lines are recorded just after the response goes out, so a test that has its answer polls.
    func line(in log: RequestLog, where match: (String) -> Bool) async -> String? {
        var found: String?
        _ = await eventually(within: .seconds(30)) {
            log.flush()
            found = lines.first(where: match)
            return found != nil
        }
        return found
    }
}
