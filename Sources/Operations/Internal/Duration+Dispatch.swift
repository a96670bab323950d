import Dispatch

extension Duration {
    /// The duration as a Dispatch interval, in whole nanoseconds; negative durations count as
    /// zero and very long ones are clamped to the longest interval Dispatch takes.
    var dispatchInterval: DispatchTimeInterval {
        let (seconds, attoseconds) = components
        guard seconds >= 0, attoseconds >= 0 else { return .nanoseconds(0) }
        let (wholeSeconds, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return .nanoseconds(Int.max) }
        let (nanoseconds, sumOverflow) = wholeSeconds.addingReportingOverflow(attoseconds / 1_000_000_000)
        return .nanoseconds(sumOverflow ? Int.max : Int(clamping: nanoseconds))
    }
}
