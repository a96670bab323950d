import Dispatch
import Synchronization

/// Runs a fixed list of closures on several threads at once and lets one thread wait for all.
///
/// Each participant claims the next unclaimed closure with an atomic counter, so every closure
/// runs exactly once however many participants there are.
final class ConcurrentBlocks: Sendable {
    private let blocks: [@Sendable () -> Void]
    private let nextIndex = Atomic<Int>(0)
    private let finishedCount = Atomic<Int>(0)
    private let allFinished = DispatchSemaphore(value: 0)

    /// How long the waiting thread lets the worker pool take the remaining closures before it runs
    /// an unclaimed one itself.
    static let helpAfter: DispatchTimeInterval = .milliseconds(10)

    init(_ blocks: [@Sendable () -> Void]) {
        self.blocks = blocks
    }

    /// Runs one unclaimed closure; returns `false` if none was left.
    @discardableResult
    func runNext() -> Bool {
        let index = nextIndex.add(1, ordering: .relaxed).oldValue
        guard index < blocks.count else { return false }
        blocks[index]()
        // Acquiring-and-releasing: the waiter must see everything every block wrote.
        if finishedCount.add(1, ordering: .acquiringAndReleasing).newValue == blocks.count {
            allFinished.signal()
        }
        return true
    }

    /// Blocks until every closure has returned. While closures are still unclaimed after
    /// ``helpAfter`` (the pool has no thread for them, for instance at its thread limit), the
    /// waiting thread runs them itself, so the wait always ends.
    func waitForAll() {
        while allFinished.wait(timeout: .now() + ConcurrentBlocks.helpAfter) == .timedOut {
            runNext()
        }
        _ = finishedCount.load(ordering: .acquiring)
    }
}
