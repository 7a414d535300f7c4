internal import CMicroHTTPD

/// What the access handler checks of a head's fields on every request, read in place from
/// libmicrohttpd (no strings made): how many there are, whether every name is a token, and how
/// the body is framed. The fields as strings are only read for a request the handler gets.
struct FieldScan {
    private(set) var count = 0
    private(set) var namesAreTokens = true
    private(set) var framing = BodyFraming()

    init(_ connection: OpaquePointer) {
        withUnsafeMutablePointer(to: &self) { scan in
            _ = MHD_get_connection_values_n(
                connection, .HEADER_KIND,
                { cls, _, key, keySize, value, valueSize in
                    let scan = cls!.assumingMemoryBound(to: FieldScan.self)
                    scan.pointee.add(
                        name: UnsafeRawBufferPointer(start: key, count: keySize),
                        value: UnsafeRawBufferPointer(start: value, count: valueSize))
                    return .YES
                }, scan)
        }
    }

    private mutating func add(name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) {
        count += 1
        if !RequestHeadCheck.isFieldName(name) { namesAreTokens = false }
        framing.add(name: name, value: value)
    }
}
