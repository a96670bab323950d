import Dispatch
import Operations
import Workloads

/// Issue 24's structures that grow with the work: the callers waiting for room in a full queue,
/// and the coalescing keys of the operations in flight.
extension Growth {
    /// `n` callers of `enqueue(_:)` wait for room in a queue of width 1 held by a first
    /// operation, whose bound lets 32 operations be pending; once every caller has arrived, the
    /// first operation ends and the callers go in, first come first served, as the queue drains.
    /// Grows the line of waiters.
    ///
    /// The bound is 32 and not 1 so that the drain is a pipeline rather than a ping-pong: with a
    /// bound of 1, each caller went in only after the operation before it had finished, two
    /// thread wake-ups per operation (20–35 µs, bimodal on a loaded machine), which drowned the
    /// line's own cost and failed the check now and then with no structure at fault (CI, issue
    /// 26). The line still holds all but 32 of the callers. And the gate opens only once every
    /// caller has arrived: before, it opened while many were still to come, and how many waited
    /// varied from run to run.
    static func admissionWaiters(_ n: Int) -> Sample {
        let clock = Stopwatch()
        do {
            let done = Countdown(n)
            let arrived = Countdown(n)
            let queue = OpQueue()
            queue.maxConcurrentOperationCount = 1
            queue.maxPendingOperationCount = 32
            let gate = DispatchSemaphore(value: 0)
            queue.addOperation(BlockOp { gate.wait() })   // holds the queue while the callers line up
            for operation in ticking(n, done) {
                Task {
                    arrived.tick()
                    try await queue.enqueue(operation)
                }
            }
            arrived.wait()
            gate.signal()
            done.wait()
        }
        return clock.sample
    }

    /// `n` operations added with `n` keys to a suspended queue, then `n` more with the same keys,
    /// which join the first ones, and `n` with the same keys replacing them; then the queue runs
    /// them. Grows the table of keys.
    static func coalescingKeys(_ n: Int) -> Sample {
        let clock = Stopwatch()
        do {
            let done = Countdown(n)
            let queue = OpQueue()
            queue.isSuspended = true
            let keys = (0..<n).map { "key-\($0)" }
            for key in keys {
                queue.addOperation(BlockOp {}, coalescingKey: key)
            }
            for key in keys {
                _ = queue.addOperation(BlockOp {}, coalescingKey: key)   // joins
            }
            for (key, operation) in zip(keys, ticking(n, done)) {
                queue.addOperation(operation, coalescingKey: key, policy: .replacePending)
            }
            queue.isSuspended = false
            done.wait()
        }
        return clock.sample
    }
}
