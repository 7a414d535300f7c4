/// How a request says where its body ends (RFC 9112 §6), gathered field by field: from the raw
/// bytes of a first head (`RequestHeadCheck`) or from libmicrohttpd's parsed fields (the access
/// handler), so both judge alike.
struct BodyFraming {
    private var contentLengths = 0
    private var invalidLength = false
    private var nonZeroLength = false
    private var transferEncoding = false

    init() {}

    mutating func add(name: some Collection<UInt8>, value: some Collection<UInt8>) {
        if Self.equalsIgnoringCase(name, "content-length") {
            contentLengths += 1
            let digits = value.drop { $0 == 32 || $0 == 9 }.reversed().drop { $0 == 32 || $0 == 9 }
            // 19 digits always fit the 64 bits libmicrohttpd reads the length into; more is no
            // body anyone means to send.
            if digits.isEmpty || digits.count > 19
                || !digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") })
            {
                invalidLength = true
            } else if digits.contains(where: { $0 != UInt8(ascii: "0") }) {
                nonZeroLength = true
            }
        } else if Self.equalsIgnoringCase(name, "transfer-encoding") {
            transferEncoding = true
        }
    }

    /// Content-Length with Transfer-Encoding, several Content-Lengths, or one that is not a
    /// number: two parsers could disagree on where the body ends (request smuggling), so the
    /// request is refused. (Several equal Content-Lengths are allowed by RFC 9112 but serve no one.)
    var isAmbiguous: Bool { invalidLength || contentLengths > 1 || (contentLengths > 0 && transferEncoding) }

    /// A Content-Length other than zero, or any Transfer-Encoding.
    var announcesBody: Bool { nonZeroLength || transferEncoding }

    /// `name` equals `lowercase` (given in lower case) ignoring ASCII case.
    private static func equalsIgnoringCase(_ name: some Collection<UInt8>, _ lowercase: StaticString) -> Bool {
        guard name.count == lowercase.utf8CodeUnitCount else { return false }
        return lowercase.withUTF8Buffer { expected in
            zip(name, expected).allSatisfy { byte, wanted in
                byte == wanted || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") && byte | 0x20 == wanted)
            }
        }
    }
}
