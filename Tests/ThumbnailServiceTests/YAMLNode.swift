import Foundation
import Testing

/// A YAML document as openapi.yaml writes it, parsed just far enough for the contract tests:
/// block mappings and sequences by indentation, `|` block scalars, quoted and plain scalars, and
/// one-line flow sequences and empty mappings (`[a, b]`, `[]`, `{}`). Anchors, tags, multi-line
/// flow collections and multi-document streams are not part of that file, and not handled.
enum YAMLNode: Equatable, CustomTestStringConvertible {
    case scalar(String)
    case sequence([YAMLNode])
    /// In document order.
    case mapping([(key: String, value: YAMLNode)])

    static func == (a: YAMLNode, b: YAMLNode) -> Bool {
        switch (a, b) {
        case (.scalar(let x), .scalar(let y)): x == y
        case (.sequence(let x), .sequence(let y)): x == y
        case (.mapping(let x), .mapping(let y)): x.map(\.key) == y.map(\.key) && x.map(\.value) == y.map(\.value)
        default: false
        }
    }

    /// Short: a failed expectation prints its operands, and a node can be the whole file.
    var testDescription: String {
        switch self {
        case .scalar(let text): text.count > 80 ? "\"\(text.prefix(80))…\"" : "\"\(text)\""
        case .sequence(let items): "[\(items.count) items]"
        case .mapping(let entries):
            "{\(entries.prefix(6).map(\.key).joined(separator: ", "))\(entries.count > 6 ? ", …" : "")}"
        }
    }

    subscript(key: String) -> YAMLNode? {
        guard case .mapping(let entries) = self else { return nil }
        return entries.first { $0.key == key }?.value
    }

    var string: String? { if case .scalar(let text) = self { text } else { nil } }
    var items: [YAMLNode] { if case .sequence(let items) = self { items } else { [] } }
    var keys: [String] { if case .mapping(let entries) = self { entries.map(\.key) } else { [] } }
    var entries: [(key: String, value: YAMLNode)] { if case .mapping(let entries) = self { entries } else { [] } }
    var number: Double? { string.flatMap(Double.init) }
    var strings: [String] { items.compactMap(\.string) }

    static func parse(_ text: String) -> YAMLNode {
        var parser = Parser(lines: text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init))
        return parser.node(indent: 0)
    }

    private struct Parser {
        let lines: [String]
        var index = 0

        init(lines: [String]) { self.lines = lines }

        static func indent(of line: String) -> Int { line.prefix { $0 == " " }.count }

        /// Skips blank and comment lines; the next content line's indent, or nil at the end.
        mutating func peekIndent() -> Int? {
            while index < lines.count {
                let trimmed = lines[index].trimmingCharacters(in: .whitespaces)
                if trimmed.isEmpty || trimmed.hasPrefix("#") {
                    index += 1
                    continue
                }
                return Self.indent(of: lines[index])
            }
            return nil
        }

        mutating func node(indent: Int) -> YAMLNode {
            guard let found = peekIndent(), found >= indent else { return .mapping([]) }
            let content = lines[index].dropFirst(found)
            return content.hasPrefix("- ") || content == "-" ? sequence(indent: found) : mapping(indent: found)
        }

        mutating func sequence(indent: Int) -> YAMLNode {
            var items: [YAMLNode] = []
            while let found = peekIndent(), found == indent, lines[index].dropFirst(indent).hasPrefix("-") {
                let rest = lines[index].dropFirst(indent + 1).drop { $0 == " " }
                if rest.isEmpty {
                    index += 1
                    items.append(node(indent: indent + 1))
                } else if Self.keyAndValue(rest) != nil {
                    // A mapping that starts on the dash's line: read it as if it began on its own.
                    let column = lines[index].count - rest.count
                    var copy = lines
                    copy[index] = String(repeating: " ", count: column) + rest
                    var inner = Parser(lines: copy)
                    inner.index = index
                    items.append(inner.mapping(indent: column))
                    index = inner.index
                } else {
                    items.append(Self.scalar(rest))
                    index += 1
                }
            }
            return .sequence(items)
        }

        mutating func mapping(indent: Int) -> YAMLNode {
            var entries: [(key: String, value: YAMLNode)] = []
            while let found = peekIndent(), found == indent, !lines[index].dropFirst(indent).hasPrefix("- ") {
                guard let (key, value) = Self.keyAndValue(lines[index].dropFirst(indent)) else {
                    index += 1
                    continue
                }
                index += 1
                if value == "|" || value == "|-" || value == ">" {
                    entries.append((key, .scalar(blockScalar(parentIndent: indent))))
                } else if value.isEmpty {
                    let next = peekIndent() ?? 0
                    entries.append((key, next > indent ? node(indent: next) : .scalar("")))
                } else {
                    entries.append((key, Self.scalar(value)))
                }
            }
            return .mapping(entries)
        }

        /// The lines indented deeper than the key, joined with newlines, their common indent removed.
        mutating func blockScalar(parentIndent: Int) -> String {
            var body: [String] = []
            while index < lines.count {
                let line = lines[index]
                if !line.trimmingCharacters(in: .whitespaces).isEmpty && Self.indent(of: line) <= parentIndent { break }
                body.append(line)
                index += 1
            }
            while body.last?.trimmingCharacters(in: .whitespaces).isEmpty == true { body.removeLast() }
            let common = body.filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty }.map(Self.indent).min() ?? 0
            return body.map { String($0.dropFirst(min(common, Self.indent(of: $0)))) }.joined(separator: "\n")
        }

        /// `key: value` or `key:`, the key plain or quoted; nil when the line is not one.
        static func keyAndValue(_ line: Substring) -> (String, Substring)? {
            var key: String
            var rest: Substring
            if let quote = line.first, quote == "'" || quote == "\"" {
                guard let close = line.dropFirst().firstIndex(of: quote) else { return nil }
                key = String(line[line.index(after: line.startIndex)..<close])
                rest = line[line.index(after: close)...]
                guard rest.hasPrefix(":") else { return nil }
            } else {
                guard
                    let colon = line.indices.first(where: { index in
                        line[index] == ":"
                            && (line.index(after: index) == line.endIndex || line[line.index(after: index)] == " ")
                    })
                else { return nil }
                key = String(line[..<colon])
                rest = line[colon...]
            }
            key = key.trimmingCharacters(in: .whitespaces)
            return (key, rest.dropFirst().drop { $0 == " " })
        }

        static func scalar(_ text: Substring) -> YAMLNode {
            let text = text.trimmingCharacters(in: .whitespaces)
            if text == "[]" { return .sequence([]) }
            if text == "{}" { return .mapping([]) }
            if text.hasPrefix("[") && text.hasSuffix("]") {
                return .sequence(
                    text.dropFirst().dropLast().split(separator: ",").map { scalar($0) })
            }
            if text.hasPrefix("'") && text.hasSuffix("'") && text.count >= 2 {
                return .scalar(String(text.dropFirst().dropLast()).replacingOccurrences(of: "''", with: "'"))
            }
            if text.hasPrefix("\"") && text.hasSuffix("\"") && text.count >= 2 {
                return .scalar(
                    String(text.dropFirst().dropLast()).replacingOccurrences(of: "\\\"", with: "\"")
                        .replacingOccurrences(of: "\\\\", with: "\\"))
            }
            return .scalar(text)
        }
    }
}
