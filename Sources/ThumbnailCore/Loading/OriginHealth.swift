/// Origins by circuit-breaker state, as the fetcher sees them now (counts only: a host is never
/// a label). `failing`: closed, with connection failures in a row below the threshold; `open`:
/// refused at once; `halfOpen`: the cool-down is over, a trial may go or is out. Origins without
/// failures are not counted. A fetcher without breakers reports zeros.
public struct OriginHealth: Sendable, Equatable {
    public var failing = 0
    public var open = 0
    public var halfOpen = 0

    public init(failing: Int = 0, open: Int = 0, halfOpen: Int = 0) {
        self.failing = failing
        self.open = open
        self.halfOpen = halfOpen
    }
}
