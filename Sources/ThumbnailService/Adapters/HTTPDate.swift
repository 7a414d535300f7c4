/// HTTP dates in the one form RFC 9110 §5.6.7 says senders must use, IMF-fixdate
/// (`Sun, 06 Nov 1994 08:49:37 GMT`), parsed strictly. The two obsolete forms are not accepted:
/// an origin date we cannot read counts as absent (or, for `Expires`, as already past).
enum HTTPDate {
    private static let days = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// Unix seconds, or nil when `text` is not an IMF-fixdate.
    static func parse(_ text: String) -> Int? {
        let bytes = Array(text.utf8)
        // "Sun, 06 Nov 1994 08:49:37 GMT": fixed width.
        guard bytes.count == 29, bytes[3] == UInt8(ascii: ","), bytes[4] == 0x20, bytes[7] == 0x20,
            bytes[11] == 0x20, bytes[16] == 0x20, bytes[19] == UInt8(ascii: ":"), bytes[22] == UInt8(ascii: ":"),
            bytes[25] == 0x20, String(decoding: bytes[26...], as: UTF8.self) == "GMT",
            days.contains(String(decoding: bytes[0..<3], as: UTF8.self)),
            let month = months.firstIndex(of: String(decoding: bytes[8..<11], as: UTF8.self)),
            let day = number(bytes[5..<7]), let year = number(bytes[12..<16]), let hour = number(bytes[17..<19]),
            let minute = number(bytes[20..<22]), let second = number(bytes[23..<25]),
            (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        return (daysFromCivil(year, month + 1, day) * 86_400) + hour * 3600 + minute * 60 + second
    }

    private static func number(_ digits: ArraySlice<UInt8>) -> Int? {
        guard digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return digits.reduce(0) { $0 * 10 + Int($1 - 0x30) }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
    private static func daysFromCivil(_ year: Int, _ month: Int, _ day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
