import Synchronization

/// A count that any thread may add to, for examples that count what ran.
final class Counter: Sendable {
    private let value = Atomic<Int>(0)

    /// Adds one.
    func increment() {
        value.add(1, ordering: .relaxed)
    }

    /// The count so far.
    var count: Int {
        value.load(ordering: .relaxed)
    }
}
