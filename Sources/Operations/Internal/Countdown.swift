import Synchronization

/// Calls its action once, when it has been ticked as many times as it was made with: the one
/// wake-up of a wait for many operations (each ticks it as it completes).
final class Countdown: Sendable {
    private let remaining: Atomic<Int>
    private let action: @Sendable () -> Void

    /// A countdown from `count` (at least 1) that calls `action` at zero.
    init(_ count: Int, action: @escaping @Sendable () -> Void) {
        precondition(count >= 1, "Operations: a countdown starts at 1 or more")
        remaining = Atomic(count)
        self.action = action
    }

    /// Counts one; the last tick calls the action, on the calling thread.
    func tick() {
        if remaining.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 {
            action()
        }
    }
}
