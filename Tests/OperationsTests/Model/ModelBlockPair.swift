import Foundation

/// Counts the blocks of a model `BlockOp` in flight: the first to start records the body's start,
/// the last to end its end.
final class ModelBlockPair: @unchecked Sendable {
    // @unchecked Sendable: the counters are guarded by `lock`.
    private let lock = NSLock()
    private var started = 0
    private var running = 0

    /// A block starts; `true` for the first.
    func enter() -> Bool {
        lock.lock()
        defer { lock.unlock() }
        started += 1
        running += 1
        return started == 1
    }

    /// A block ends; `true` for the last of the two.
    func leave() -> Bool {
        lock.lock()
        defer { lock.unlock() }
        running -= 1
        return running == 0 && started == 2
    }
}
