import ThumbnailCore

/// A service event (start, settings, drain, stop, a circuit breaker, dropped lines): a name, a
/// sentence for people and typed fields for machines, written in the log's format. Rare, so built
/// with strings; request lines take the allocation-free path in `RequestLog.record`.
public struct LogEvent: Sendable {
    /// A field's value: numbers and booleans stay numbers and booleans in JSON.
    public enum Value: Sendable, Equatable {
        case text(String)
        case int(Int)
        case number(Double)
        case bool(Bool)
    }

    /// Short and fixed, one word per kind of event (`start`, `breaker-open`, …): what to filter on.
    public var name: String
    /// The same in words.
    public var message: String
    public var fields: [(String, Value)]

    public init(_ name: String, _ message: String, _ fields: [(String, Value)] = []) {
        self.name = name
        self.message = message
        self.fields = fields
    }

    /// The line, newline included: `ts=… event=NAME msg="…" key=value…` or
    /// `{"ts":…,"event":"NAME","msg":"…","key":value…}`.
    func line(_ format: LogFormat, timestamp: String) -> String {
        let all = [("event", Value.text(name)), ("msg", .text(message))] + fields
        switch format {
        case .logfmt:
            return "ts=\(timestamp)" + all.map { " \($0.0)=\(Self.logfmt($0.1))" }.joined() + "\n"
        case .json:
            return "{\"ts\":\(timestamp)" + all.map { ",\(JSON.string($0.0)):\(Self.json($0.1))" }.joined() + "}\n"
        }
    }

    private static func json(_ value: Value) -> String {
        switch value {
        case .text(let text): JSON.string(text)
        case .int(let number): String(number)
        case .number(let number):
            // Whole seconds as written in --help ("10", not "10.0").
            !number.isFinite
                ? "null" : number == number.rounded() && abs(number) < 1e15 ? String(Int(number)) : String(number)
        case .bool(let flag): String(flag)
        }
    }

    private static func logfmt(_ value: Value) -> String {
        switch value {
        case .text(let text):
            let plain =
                !text.isEmpty
                && text.unicodeScalars.allSatisfy {
                    $0.value > 0x20 && $0.value != 0x7F && $0 != "\"" && $0 != "=" && $0 != "\\"
                }
            return plain ? text : JSON.string(text)
        case .int, .number, .bool: return json(value)
        }
    }
}
