import Operations
import Synchronization

/// Counts the downloads running at each moment, to measure the peak concurrency that the
/// download queue's `maxConcurrentOperationCount` allows, and records the order they start in.
final class DownloadTracker: Sendable {
    private struct State {
        var running = 0
        var peak = 0
        var startOrder: [(name: String, priority: Op.QueuePriority)] = []
    }

    private let state = Mutex(State())

    /// Creates a tracker with nothing running.
    init() {}

    /// Records that the download of `name` started; returns how many are running now, this one
    /// included.
    func started(_ name: String, priority: Op.QueuePriority) -> Int {
        state.withLock { state in
            state.running += 1
            state.peak = max(state.peak, state.running)
            state.startOrder.append((name, priority))
            return state.running
        }
    }

    /// Records that a download stopped.
    func stopped() {
        state.withLock { $0.running -= 1 }
    }

    /// The most downloads that ran at once.
    var peak: Int {
        state.withLock { $0.peak }
    }

    /// The downloads that started, in the order they started.
    var startOrder: [(name: String, priority: Op.QueuePriority)] {
        state.withLock { $0.startOrder }
    }
}
