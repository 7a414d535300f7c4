extension Duration {
    /// Whole and fractional seconds (for settings written as seconds).
    var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }

    /// As a setting is written: "10", "0.5".
    var secondsText: String {
        let value = seconds
        return value == value.rounded() ? String(Int(value)) : String(value)
    }

    /// Whole seconds, for header values (`Retry-After`, `max-age`).
    var wholeSeconds: Int { Int(components.seconds) }
}
