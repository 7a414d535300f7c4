import Dispatch
import Foundation
import Synchronization
import TestSupport
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

/// The two line formats, on a log whose sink the test holds.
@Suite struct LogFormatTests {
    static let awkward = "quote \" backslash \\ newline \n tab \t bell \u{7} del \u{7F} é ☃ 😀"

    static func entry(error: String?) -> RequestLog.Entry {
        .init(
            requestID: RequestIDs().next(incoming: "trace-1"), method: "GET", route: "/thumb", status: 200,
            bytes: 1234, elapsedNanos: 3_141_000, cache: "hit", error: error)
    }

    static func written(_ format: LogFormat, _ entries: [RequestLog.Entry]) -> [String] {
        let capture = LogCapture()
        let log = RequestLog(enabled: true, format: format, sink: capture.sink)
        for entry in entries { log.record(entry) }
        log.flush()
        return capture.lines
    }

    static func object(_ line: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
    }

    @Test func logfmtLinesAreAsBefore() throws {
        let lines = Self.written(.logfmt, [Self.entry(error: nil), Self.entry(error: "a \"b\"\n")])
        #expect(lines.count == 2)
        let plain = try Regex(
            #"^ts=[0-9]+\.[0-9]{3} id=trace-1 method=GET route=/thumb status=200 bytes=1234 ms=3\.1 cache=hit$"#
        )
        #expect(lines[0].wholeMatch(of: plain) != nil, "\(lines[0])")
        #expect(lines[1].hasSuffix(#" cache=hit error="a \"b\"\n""#), "\(lines[1])")
    }

    @Test func jsonLinesHaveTheSameFieldsWithNumbersAsNumbers() throws {
        let lines = Self.written(.json, [Self.entry(error: nil), Self.entry(error: Self.awkward)])
        #expect(lines.count == 2)
        let first = try Self.object(lines[0])
        #expect(Set(first.keys) == ["ts", "id", "method", "route", "status", "bytes", "ms", "cache"])
        #expect(first["status"] as? Int == 200)
        #expect(first["bytes"] as? Int == 1234)
        #expect(first["ts"] is Double && first["ms"] as? Double == 3.1)
        #expect(first["id"] as? String == "trace-1")
        #expect(first["method"] as? String == "GET" && first["route"] as? String == "/thumb")
        #expect(first["cache"] as? String == "hit")
        // Quotes, backslashes and control characters are escaped; the text comes back intact.
        let second = try Self.object(lines[1])
        #expect(second["error"] as? String == Self.awkward)
        #expect(!lines[1].contains("\u{7}"))
    }

    @Test func aLongErrorIsCutButTheJSONLineStillParses() throws {
        let long = String(repeating: "x\"é", count: 1000)
        let lines = Self.written(.json, [Self.entry(error: long)])
        #expect(lines.count == 1)
        #expect(lines[0].utf8.count < RequestLog.lineCapacity)
        let error = try #require(try Self.object(lines[0])["error"] as? String)
        #expect(error.count > 100 && long.hasPrefix(error))
    }

    /// Standard error stalls (the sink blocks): past 8 MiB lines are dropped, counted, and the count
    /// is logged as a `dropped` event once writing resumes; accepted + dropped = recorded.
    @Test func linesBeyondTheBoundAreDroppedAndCountedInAnEvent() async throws {
        let capture = LogCapture()
        let gate = TestGate()
        let blocked = Atomic<Bool>(false)
        let log = RequestLog(enabled: true, format: .json) { raw in
            blocked.store(true, ordering: .releasing)
            gate.wait()
            capture.sink(raw)
        }
        log.record(Self.entry(error: nil))
        // The writer thread has taken that line and is stuck writing it.
        #expect(await eventually(within: .seconds(30)) { blocked.load(ordering: .acquiring) })
        let recorded = 100_000  // about 9 MiB of lines
        for _ in 0..<recorded { log.record(Self.entry(error: nil)) }
        gate.open()
        log.flush()
        let objects = try capture.objects.map { try #require($0) }
        let requests = objects.filter { $0["event"] == nil }.count
        let dropped = try #require(objects.first { $0["event"] as? String == "dropped" })
        let lost = try #require(dropped["lines"] as? Int)
        #expect(lost > 0)
        #expect(requests - 1 + lost == recorded)
    }

    @Test func eventsKeepTheirTypesInBothFormats() throws {
        let event = LogEvent(
            "start", "thumbd listening on 127.0.0.1:8080",
            [
                ("port", .int(8080)), ("grace", .number(10)), ("ratio", .number(0.5)), ("on", .bool(true)),
                ("text", .text("a b\"c")), ("empty", .text("")), ("plain", .text("/thumb")),
            ])
        let logfmt = event.line(.logfmt, timestamp: "1795984601.533")
        #expect(
            logfmt
                == #"ts=1795984601.533 event=start msg="thumbd listening on 127.0.0.1:8080" port=8080 grace=10 ratio=0.5 on=true text="a b\"c" empty="" plain=/thumb"#
                + "\n")
        let json = event.line(.json, timestamp: "1795984601.533")
        #expect(json.hasSuffix("}\n"))
        let object = try Self.object(String(json.dropLast()))
        #expect(object["ts"] as? Double == 1_795_984_601.533)
        #expect(object["event"] as? String == "start")
        #expect(object["msg"] as? String == "thumbd listening on 127.0.0.1:8080")
        #expect(object["port"] as? Int == 8080 && object["grace"] as? Int == 10)
        #expect(object["ratio"] as? Double == 0.5 && object["on"] as? Bool == true)
        #expect(object["text"] as? String == "a b\"c" && object["empty"] as? String == "")
    }
}
