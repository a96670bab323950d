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

    init(_ blocks: [@Sendable () -> Void]) {
        self.blocks = blocks
    }

    /// Runs one unclaimed closure, if any is left.
    func runNext() {
        let index = nextIndex.add(1, ordering: .relaxed).oldValue
        guard index < blocks.count else { return }
        blocks[index]()
        // Acquiring-and-releasing: the waiter must see everything every block wrote.
        if finishedCount.add(1, ordering: .acquiringAndReleasing).newValue == blocks.count {
            allFinished.signal()
        }
    }

    /// Blocks until every closure has returned.
    func waitForAll() {
        allFinished.wait()
        _ = finishedCount.load(ordering: .acquiring)
    }
}
