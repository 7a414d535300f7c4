/// Stops the fuzzer with `message` when an invariant does not hold. A trap (not a thrown error) so
/// that libFuzzer saves the input as a crash and prints the message with it.
public func invariant(
    _ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String, file: StaticString = #file,
    line: UInt = #line
) {
    if !condition() { fatalError("invariant violated: \(message())", file: file, line: line) }
}

/// The fuzzer's input as a string; invalid UTF-8 is replaced, as every entry point of the service
/// (libmicrohttpd's header and query values through `String(decoding:)`) does.
public func text(_ data: UnsafePointer<UInt8>, _ size: Int) -> String {
    String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
}
