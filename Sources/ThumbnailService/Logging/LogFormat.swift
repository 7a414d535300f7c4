/// How log lines are written (`--log-format`): the same fields either way.
/// - `logfmt`: `key=value` pairs separated by spaces; a value with spaces, quotes, `=` or control
///   characters is quoted and escaped as a JSON string.
/// - `json`: one JSON object per line, strings escaped, numbers as numbers (for log shippers that
///   parse JSON without a grammar per service).
public enum LogFormat: String, Sendable, Equatable, CaseIterable {
    case logfmt
    case json
}
