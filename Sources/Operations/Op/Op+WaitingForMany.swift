import Dispatch

// One wait for many operations (`addOperations(_:waitUntilFinished: true)`): the waiter is woken
// once, by the last of them to complete, instead of once per operation.

extension Op {
    /// Blocks until every operation of `operations` is finished for good, as
    /// ``waitUntilFinished()-2def2`` on each in turn would, with one wake-up. The checks of each
    /// wait (a wait that could never return traps; one that must return at once is skipped) come
    /// first.
    static func blockUntilAllFinished(_ operations: [Op]) {
        let waited = operations.filter { $0.blockingWaitMustBlock() }
        guard !waited.isEmpty else { return }
        let semaphore = DispatchSemaphore(value: 0)
        onCompletion(ofAll: waited) { semaphore.signal() }
        CycleSearchingWait.block(on: semaphore) { DependencyCycles.endCycles(reachableFromAnyOf: waited) }
    }

    /// Suspends until every operation of `operations` is finished for good, as `await`ing
    /// ``waitUntilFinished()-3s203`` on each in turn would, with one resumption.
    static func waitUntilAllFinished(_ operations: [Op]) async {
        let current = Op.currentTaskOperation
        let waited = operations.filter { $0.asyncWaitMustSuspend(inTaskOf: current) }
        guard !waited.isEmpty else { return }
        let watch = CycleSearchingWait.watch { [waited] in DependencyCycles.endCycles(reachableFromAnyOf: waited) }
        await withCheckedContinuation { continuation in
            onCompletion(ofAll: waited) { continuation.resume() }
        }
        watch?.stop()
    }

    /// Calls `done` once, when every operation of `operations` (at least one) is finished for
    /// good, on the thread that completes the last of them (or on this one, if they all are).
    private static func onCompletion(ofAll operations: [Op], _ done: @escaping @Sendable () -> Void) {
        // One more than the operations: the last tick is this thread's, once every waiter is
        // registered, so the countdown cannot reach zero before.
        let countdown = Countdown(operations.count + 1, action: done)
        for operation in operations {
            operation.onCompletion { countdown.tick() }
        }
        countdown.tick()
    }
}
