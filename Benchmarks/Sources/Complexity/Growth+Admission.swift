import Dispatch
import Operations
import Workloads

/// Issue 24's structures that grow with the work: the callers waiting for room in a full queue,
/// and the coalescing keys of the operations in flight.
extension Growth {
    /// `n` callers of `enqueue(_:)` wait for room in a queue of width 1 that holds one operation
    /// at a time (its bound is 1), then go in one by one, first come first served, as the queue
    /// drains. Grows the line of waiters.
    static func admissionWaiters(_ n: Int) -> Sample {
        let clock = Stopwatch()
        do {
            let done = Countdown(n)
            let queue = OpQueue()
            queue.maxConcurrentOperationCount = 1
            queue.maxPendingOperationCount = 1
            let gate = DispatchSemaphore(value: 0)
            queue.addOperation(BlockOp { gate.wait() })   // holds the queue while the callers line up
            for operation in ticking(n, done) {
                Task { try await queue.enqueue(operation) }
            }
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
