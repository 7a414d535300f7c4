internal import CMicroHTTPD

extension HTTPRequest {
    /// A request head read from libmicrohttpd; `headers` from ``headerFields(of:)``.
    init(
        url: UnsafePointer<CChar>?, method: UnsafePointer<CChar>?, version: UnsafePointer<CChar>?,
        target: String?, headers: [(name: String, value: String)], hasBody: Bool
    ) {
        let path = url.map { String(cString: $0) } ?? "/"
        self.init(
            method: method.map { String(cString: $0) } ?? "",
            target: target ?? path,
            path: path,
            headers: headers,
            version: version.map { String(cString: $0) } ?? "",
            hasBody: hasBody)
    }

    /// The header fields of the connection's current request, in order, duplicates kept.
    static func headerFields(of connection: OpaquePointer) -> [(name: String, value: String)] {
        var headers: [(name: String, value: String)] = []
        withUnsafeMutablePointer(to: &headers) { headers in
            _ = MHD_get_connection_values_n(
                connection, .HEADER_KIND,
                { cls, _, key, keySize, value, valueSize in
                    let headers = cls!.assumingMemoryBound(to: [(name: String, value: String)].self)
                    headers.pointee.append((string(key, keySize), string(value, valueSize)))
                    return .YES
                }, headers)
        }
        return headers
    }
}

private func string(_ bytes: UnsafePointer<CChar>?, _ count: Int) -> String {
    guard let bytes else { return "" }
    return String(decoding: UnsafeRawBufferPointer(start: bytes, count: count), as: UTF8.self)
}
