import ThumbnailCore

/// Writes the Prometheus text exposition format, version 0.0.4: per metric family a `# HELP` and a
/// `# TYPE` line, then its samples, `name{label="value",…} value`. Label values are escaped as the
/// format requires (backslash, double quote, newline), though every value thumbd writes comes from
/// a fixed set.
struct PrometheusText {
    static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    private(set) var text = ""

    mutating func counter(_ name: String, _ help: String, _ samples: [(labels: [(String, String)], value: Int)]) {
        family(name, "counter", help)
        for sample in samples { line(name, sample.labels, String(sample.value)) }
    }

    mutating func counter(_ name: String, _ help: String, _ value: Int) { counter(name, help, [([], value)]) }

    /// A counter of seconds (CPU time): not a whole number.
    mutating func counter(_ name: String, _ help: String, seconds: Double) {
        family(name, "counter", help)
        line(name, [], Self.number(seconds))
    }

    mutating func gauge(_ name: String, _ help: String, _ samples: [(labels: [(String, String)], value: Double)]) {
        family(name, "gauge", help)
        for sample in samples { line(name, sample.labels, Self.number(sample.value)) }
    }

    mutating func gauge(_ name: String, _ help: String, _ value: Double) { gauge(name, help, [([], value)]) }

    mutating func gauge(_ name: String, _ help: String, _ value: Int) { gauge(name, help, [([], Double(value))]) }

    mutating func histogram(
        _ name: String, _ help: String, _ series: [(labels: [(String, String)], histogram: HistogramSnapshot)]
    ) {
        family(name, "histogram", help)
        for (labels, histogram) in series {
            for (bound, count) in zip(histogram.bounds, histogram.cumulativeCounts) {
                line(name + "_bucket", labels + [("le", Self.number(bound))], String(count))
            }
            line(name + "_bucket", labels + [("le", "+Inf")], String(histogram.count))
            line(name + "_sum", labels, Self.number(histogram.sum))
            line(name + "_count", labels, String(histogram.count))
        }
    }

    private mutating func family(_ name: String, _ type: String, _ help: String) {
        text += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
    }

    private mutating func line(_ name: String, _ labels: [(String, String)], _ value: String) {
        text += name
        if !labels.isEmpty {
            text += "{"
            for (index, (label, value)) in labels.enumerated() {
                if index > 0 { text += "," }
                text += "\(label)=\"\(Self.escape(value))\""
            }
            text += "}"
        }
        text += " \(value)\n"
    }

    static func escape(_ value: String) -> String {
        guard value.contains(where: { $0 == "\\" || $0 == "\"" || $0 == "\n" }) else { return value }
        var escaped = ""
        for character in value {
            switch character {
            case "\\": escaped += "\\\\"
            case "\"": escaped += "\\\""
            case "\n": escaped += "\\n"
            default: escaped.append(character)
            }
        }
        return escaped
    }

    /// A sample value: integers without a fraction, others in Swift's shortest exact form.
    static func number(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return String(value)
    }
}
