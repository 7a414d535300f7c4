import Primitives
import Testing

@Suite struct DurationConversionTests {
    @Test func nanosecondsTruncateAndSaturate() {
        #expect(Duration.seconds(2).nanoseconds == 2_000_000_000)
        #expect((Duration.milliseconds(1500) + .nanoseconds(7)).nanoseconds == 1_500_000_007)
        #expect(Duration.nanoseconds(-3).nanoseconds == -3)
        #expect(Duration.seconds(Int64.max).nanoseconds == .max)
        #expect(Duration.seconds(Int64.min).nanoseconds == .min)
    }

    @Test func roundedUpCountsWholeUnits() {
        #expect(Duration.microseconds(1500).roundedUp(to: .milliseconds(1)) == 2)
        #expect(Duration.milliseconds(3).roundedUp(to: .milliseconds(1)) == 3)
        #expect(Duration.nanoseconds(1).roundedUp(to: .seconds(1)) == 1)
        #expect(Duration.milliseconds(30_000).roundedUp(to: .seconds(1)) == 30)
        #expect(Duration.zero.roundedUp(to: .milliseconds(1)) == 0)
        #expect(Duration.milliseconds(-1500).roundedUp(to: .seconds(1)) == -1)
        // Saturated at Int64.max nanoseconds, which is not a whole number of milliseconds.
        #expect(Duration.seconds(Int64.max).roundedUp(to: .milliseconds(1)) == Int64.max / 1_000_000 + 1)
    }

    @Test func timespecAndSeconds() {
        let spec = (Duration.seconds(3) + .nanoseconds(250)).timespec
        #expect(spec.tv_sec == 3)
        #expect(spec.tv_nsec == 250)
        #expect(Duration.seconds(-1).timespec.tv_sec == 0)
        #expect(Duration.milliseconds(1500).seconds == 1.5)
    }
}
