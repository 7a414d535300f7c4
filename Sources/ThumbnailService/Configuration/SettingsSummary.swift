extension ServiceConfiguration {
    /// The `settings` event logged at start: every setting by its flag name with the value in
    /// effect, as `--help` writes a default — so the secrets appear only as "(N keys)" and "(set)",
    /// never themselves. Counts are numbers, seconds numbers, switches booleans (in JSON too).
    var settingsEvent: LogEvent {
        let fields = Self.settings.map { setting -> (String, LogEvent.Value) in
            let text = setting.defaultText(self)
            switch setting.kind {
            case .bool: return (setting.name, .bool(text == "true"))
            case .value("N"): return (setting.name, Int(text).map { .int($0) } ?? .text(text))
            case .value("SECONDS"): return (setting.name, Double(text).map { .number($0) } ?? .text(text))
            case .value: return (setting.name, .text(text))
            }
        }
        return LogEvent("settings", "settings in effect (secrets not shown)", fields)
    }
}
