import Dispatch
import Synchronization

/// Counts operation bodies down to zero and wakes the waiting thread at zero.
///
/// The workloads wait with this, not with `waitUntilAllOperationsAreFinished()` or
/// `waitUntilFinished()`: those search for dependency cycles when a wait lasts, and the searches
/// would be measured with the structure.
final class Countdown: Sendable {
    private let remaining: Atomic<Int>
    private let zero = DispatchSemaphore(value: 0)

    init(_ count: Int) {
        remaining = Atomic(count)
        if count == 0 { zero.signal() }
    }

    /// One body ran; the last one wakes ``wait()``.
    func tick() {
        if remaining.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 {
            zero.signal()
        }
    }

    /// Blocks until the count reaches zero.
    func wait() {
        zero.wait()
    }
}
