/// An absolute http(s) source URL in canonical form, parsed strictly.
///
/// The parser is deliberately narrower than RFC 3986: printable ASCII only, no user info, no
/// percent-encoded or non-ASCII hosts. Anything odd is refused rather than interpreted, so that
/// what we check (scheme, host, port) is exactly what libcurl will connect to.
public struct SourceURL: Sendable, Hashable, CustomStringConvertible {
    public enum Scheme: String, Sendable { case http, https }

    public let scheme: Scheme
    /// Lower-cased host name, dotted IPv4, or an IPv6 literal without brackets.
    public let host: String
    /// nil when the scheme's default port.
    public let port: Int?
    /// Path and query, starting with "/". The fragment is dropped.
    public let pathAndQuery: String

    public static let maxLength = 4096

    public init(parsing text: String) throws(ThumbnailError) {
        func bad(_ reason: String) -> ThumbnailError { .invalid([.init(name: "url", reason: reason)]) }
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty else { throw bad("must not be empty") }
        guard bytes.count <= Self.maxLength else { throw bad("must be at most \(Self.maxLength) bytes") }
        guard bytes.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\\") }) else {
            throw bad("must be printable ASCII without spaces or backslashes (percent-encode the rest)")
        }
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")),
            let scheme = Scheme(rawValue: String(decoding: bytes[..<colon], as: UTF8.self).lowercased())
        else { throw bad("must be an absolute http or https URL") }
        guard bytes[(colon + 1)...].starts(with: "//".utf8) else { throw bad("must be an absolute http or https URL") }

        let authorityStart = colon + 3
        let authorityEnd =
            bytes[authorityStart...].firstIndex {
                $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#")
            }
            ?? bytes.endIndex
        let authority = bytes[authorityStart..<authorityEnd]
        guard !authority.contains(UInt8(ascii: "@")) else { throw bad("must not contain user information") }

        var hostPart = authority[...]
        var portPart: ArraySlice<UInt8>? = nil
        if authority.first == UInt8(ascii: "[") {
            guard let close = authority.firstIndex(of: UInt8(ascii: "]")) else {
                throw bad("has an unterminated IPv6 literal")
            }
            hostPart = authority[(authority.startIndex + 1)..<close]
            let rest = authority[(close + 1)...]
            if let first = rest.first {
                guard first == UInt8(ascii: ":") else { throw bad("has characters after the IPv6 literal") }
                portPart = rest.dropFirst()
            }
            guard IPAddress(text: String(decoding: hostPart, as: UTF8.self))?.isIPv6 == true else {
                throw bad("has an invalid IPv6 literal")
            }
        } else if let portColon = authority.firstIndex(of: UInt8(ascii: ":")) {
            hostPart = authority[..<portColon]
            portPart = authority[(portColon + 1)...]
        }
        let host = String(decoding: hostPart, as: UTF8.self).lowercased()
        if authority.first != UInt8(ascii: "[") {
            let allowed = { (c: UInt8) in
                (c >= 0x61 && c <= 0x7A) || (c >= 0x30 && c <= 0x39) || c == UInt8(ascii: "-") || c == UInt8(ascii: ".")
                    || c == UInt8(ascii: "_")
            }
            guard !host.isEmpty, host.utf8.count <= 253, host.utf8.allSatisfy(allowed) else {
                throw bad("has an invalid host")
            }
            guard !host.hasPrefix("."), !host.contains("..") else { throw bad("has an invalid host") }
        }

        var port: Int? = nil
        if let portPart {
            guard !portPart.isEmpty, portPart.count <= 5, portPart.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
                let value = Int(String(decoding: portPart, as: UTF8.self)), (1...65535).contains(value)
            else { throw bad("has an invalid port") }
            port = value == (scheme == .http ? 80 : 443) ? nil : value
        }

        var rest = bytes[authorityEnd...]
        if let hash = rest.firstIndex(of: UInt8(ascii: "#")) { rest = rest[..<hash] }
        var pathAndQuery = String(decoding: rest, as: UTF8.self)
        if !pathAndQuery.hasPrefix("/") { pathAndQuery = "/" + pathAndQuery }

        self.scheme = scheme
        self.host = host
        self.port = port
        self.pathAndQuery = pathAndQuery
        let hostText = authority.first == UInt8(ascii: "[") ? "[\(host)]" : host
        let portText = port.map { ":\($0)" } ?? ""
        self.description = "\(scheme.rawValue)://\(hostText)\(portText)\(pathAndQuery)"
    }

    /// The canonical text: also the cache key of the original and what libcurl is given. Made
    /// once: every cache lookup builds keys from it.
    public let description: String
}
