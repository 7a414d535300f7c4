import Testing

@testable import ThumbnailService

@Suite struct RequestLogTests {
    @Test func numbersAreFormattedWithoutStrings() {
        var bytes: [UInt8] = []
        bytes.appendDecimal(0)
        bytes.append(UInt8(ascii: " "))
        bytes.appendDecimal(1_795_984_601)
        bytes.append(UInt8(ascii: " "))
        bytes.appendDecimal(7, width: 3)
        bytes.append(UInt8(ascii: " "))
        bytes.appendDecimal(UInt64.max)
        bytes.append(UInt8(ascii: " "))
        bytes.appendHex(0)
        bytes.append(UInt8(ascii: " "))
        bytes.appendHex(0xBEEF)
        #expect(String(decoding: bytes, as: UTF8.self) == "0 1795984601 007 18446744073709551615 0 beef")
    }

    @Test func requestIDsKeepPlainClientIDsAndCountOtherwise() {
        let ids = RequestIDs()
        #expect(ids.next(incoming: "trace-42.a_b").description == "trace-42.a_b")
        let first = ids.next(incoming: nil).description
        let second = ids.next(incoming: "has space").description
        #expect(first.hasSuffix("-1"))
        #expect(second.hasSuffix("-2"))
        #expect(ids.next(incoming: String(repeating: "x", count: 65)).description.hasSuffix("-3"))
    }
}
