import Synchronization

/// Counts the jobs running at once, from any thread, and keeps the most there ever were: for
/// examples that show a queue's width (or a serial queue) holding.
///
/// A job is counted from the moment ``measure(_:)`` calls it until it returns, so two jobs that
/// overlap for any part of that time both count.
final class ConcurrencyGauge: Sendable {
    private let running = Atomic<Int>(0)
    private let mostAtOnce = Atomic<Int>(0)

    /// Runs `job`, counted as running until it returns, and returns what it returns.
    func measure<Result>(_ job: () throws -> Result) rethrows -> Result {
        let now = running.add(1, ordering: .relaxed).newValue
        mostAtOnce.max(now, ordering: .relaxed)
        defer { running.subtract(1, ordering: .relaxed) }
        return try job()
    }

    /// The most jobs that were ever running at once.
    var peak: Int {
        mostAtOnce.load(ordering: .relaxed)
    }
}
