/// One documented setting: its flag, its environment variable, its help and how to apply it.
struct Setting: Sendable {
    enum Kind: Sendable { case bool, value(String) }

    let name: String
    let kind: Kind
    let help: String
    let defaultText: @Sendable (ServiceConfiguration) -> String
    let apply: @Sendable (inout ServiceConfiguration, String) -> String?
    /// For a default derived from the machine (cores, memory): what it is, in words (the value
    /// `--help` prints is this machine's).
    var derivedDefault: String? = nil

    init(
        name: String, kind: Kind, help: String, derivedDefault: String? = nil,
        defaultText: @escaping @Sendable (ServiceConfiguration) -> String,
        apply: @escaping @Sendable (inout ServiceConfiguration, String) -> String?
    ) {
        self.name = name
        self.kind = kind
        self.help = help
        self.derivedDefault = derivedDefault
        self.defaultText = defaultText
        self.apply = apply
    }

    var flag: String { "--\(name)" }
    var environmentName: String { "THUMBD_" + name.uppercased().replacingOccurrences(of: "-", with: "_") }

    static func int(
        _ name: String, _ keyPath: WritableKeyPath<ServiceConfiguration, Int> & Sendable, _ range: ClosedRange<Int>,
        _ help: String, derivedDefault: String? = nil
    ) -> Setting {
        Setting(
            name: name, kind: .value("N"), help: help, derivedDefault: derivedDefault,
            defaultText: { String($0[keyPath: keyPath]) }
        ) {
            config, text in
            guard let value = Int(text), range.contains(value) else {
                return "must be an integer from \(range.lowerBound) to \(range.upperBound)"
            }
            config[keyPath: keyPath] = value
            return nil
        }
    }

    static func bytes(
        _ name: String, _ keyPath: WritableKeyPath<ServiceConfiguration, Int> & Sendable, _ range: ClosedRange<Int>,
        _ help: String, derivedDefault: String? = nil
    ) -> Setting {
        Setting(
            name: name, kind: .value("BYTES"), help: help, derivedDefault: derivedDefault,
            defaultText: { ByteCount.format($0[keyPath: keyPath]) }
        ) {
            config, text in
            guard let value = ByteCount.parse(text), range.contains(value) else {
                return
                    "must be a byte count from \(ByteCount.format(range.lowerBound)) to \(ByteCount.format(range.upperBound)) (e.g. 512M, 2G)"
            }
            config[keyPath: keyPath] = value
            return nil
        }
    }

    /// A duration written as seconds (decimals allowed, e.g. 0.5); `wholeSeconds` for settings that
    /// go out as an integer header value.
    static func seconds(
        _ name: String, _ keyPath: WritableKeyPath<ServiceConfiguration, Duration> & Sendable,
        _ range: ClosedRange<Double>, _ help: String, wholeSeconds: Bool = false
    ) -> Setting {
        Setting(name: name, kind: .value("SECONDS"), help: help, defaultText: { $0[keyPath: keyPath].secondsText }) {
            config, text in
            guard let value = Double(text), value.isFinite, range.contains(value),
                !wholeSeconds || value == value.rounded()
            else {
                let kind = wholeSeconds ? "a whole number of seconds" : "a number of seconds"
                return "must be \(kind) from \(formatSeconds(range.lowerBound)) to \(formatSeconds(range.upperBound))"
            }
            config[keyPath: keyPath] = .milliseconds(Int64((value * 1000).rounded()))
            return nil
        }
    }

    /// A comma-separated list of integers in `range`; empty means none.
    static func list(
        _ name: String, _ keyPath: WritableKeyPath<ServiceConfiguration, [Int]> & Sendable, _ range: ClosedRange<Int>,
        _ help: String
    ) -> Setting {
        Setting(
            name: name, kind: .value("LIST"), help: help,
            defaultText: { $0[keyPath: keyPath].map(String.init).joined(separator: ",") }
        ) { config, text in
            let items = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter {
                !$0.isEmpty
            }
            let values = items.compactMap { Int($0) }.filter { range.contains($0) }
            guard values.count == items.count else {
                return "must be a comma-separated list of integers from \(range.lowerBound) to \(range.upperBound)"
            }
            config[keyPath: keyPath] = values
            return nil
        }
    }

    static func bool(_ name: String, _ keyPath: WritableKeyPath<ServiceConfiguration, Bool> & Sendable, _ help: String)
        -> Setting
    {
        Setting(name: name, kind: .bool, help: help, defaultText: { String($0[keyPath: keyPath]) }) { config, text in
            switch text.lowercased() {
            case "1", "true", "yes", "on": config[keyPath: keyPath] = true
            case "0", "false", "no", "off": config[keyPath: keyPath] = false
            default: return "must be true or false"
            }
            return nil
        }
    }

    static func formatSeconds(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }
}
