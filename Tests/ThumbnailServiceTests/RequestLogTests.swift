import Testing

@testable import ThumbnailService

@Suite struct RequestLogTests {
    @Test func numbersAreFormattedWithoutStrings() {
        let text = LogLine.withScratch(capacity: 128) { line in
            line.appendDecimal(0)
            line.append(UInt8(ascii: " "))
            line.appendDecimal(1_795_984_601)
            line.append(UInt8(ascii: " "))
            line.appendDecimal(7, width: 3)
            line.append(UInt8(ascii: " "))
            line.appendDecimal(UInt64.max)
            line.append(UInt8(ascii: " "))
            line.appendHex(0)
            line.append(UInt8(ascii: " "))
            line.appendHex(0xBEEF)
            return line.text
        }
        #expect(text == "0 1795984601 007 18446744073709551615 0 beef")
    }

    @Test func aLineThatDoesNotFitIsCutAndStillEndsWithItsNewline() {
        let text = LogLine.withScratch(capacity: 8) { line in
            line.append("ts=")
            line.append(String(repeating: "x", count: 40))
            line.appendDecimal(123_456)
            let finished = line.finished()
            return String(decoding: finished, as: UTF8.self)
        }
        #expect(text == "ts=xxxx\n")
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
