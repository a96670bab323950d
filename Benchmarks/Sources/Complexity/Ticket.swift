import Synchronization

/// Hands out numbers, for workloads whose operations add the next ones.
final class Ticket: Sendable {
    private let next: Atomic<Int>

    init(startingAt first: Int) {
        next = Atomic(first)
    }

    /// The next number (relaxed: only its uniqueness matters).
    func take() -> Int {
        next.add(1, ordering: .relaxed).oldValue
    }
}
