import Dispatch

// One wait for many operations (`addOperations(_:waitUntilFinished: true)`): the waiter is woken
// once, by the last of them to complete, instead of once per operation.

extension Op {
    /// Blocks until every operation of `operations` is finished for good, as
    /// ``waitUntilFinished()-2def2`` on each in turn would, with one wake-up. The checks of each
    /// wait (a wait that could never return traps; one that must return at once is skipped) come
    /// first.
    static func blockUntilAllFinished(_ operations: [Op]) {
        var waited: [Op] = []
        for operation in operations {
            if operation.withState({ $0.lifecycle == .finished }) || ThreadContext.completingOperation === operation { continue }
            if WaitDeadlocks.checkWait(for: operation) { continue }
            waited.append(operation)
        }
        guard !waited.isEmpty else { return }
        let semaphore = DispatchSemaphore(value: 0)
        // One more than the operations: the last tick is this thread's, once every waiter is
        // registered, so the countdown cannot reach zero before.
        let countdown = Countdown(waited.count + 1) { semaphore.signal() }
        for operation in waited {
            operation.onCompletion { countdown.tick() }
        }
        countdown.tick()
        CycleSearchingWait.block(on: semaphore) { DependencyCycles.endCycles(reachableFromAnyOf: waited) }
    }

    /// Suspends until every operation of `operations` is finished for good, as `await`ing
    /// ``waitUntilFinished()-3s203`` on each in turn would, with one resumption.
    static func waitUntilAllFinished(_ operations: [Op]) async {
        var waited: [Op] = []
        let current = Op.currentTaskOperation
        for operation in operations {
            if operation.withState({ $0.lifecycle == .finished }) { continue }
            if let current, WaitDeadlocks.check(waitFor: operation, holds: .task(running: current)) { continue }
            waited.append(operation)
        }
        guard !waited.isEmpty else { return }
        let watch = CycleSearchingWait.watch { [waited] in DependencyCycles.endCycles(reachableFromAnyOf: waited) }
        await withCheckedContinuation { continuation in
            let countdown = Countdown(waited.count + 1) { continuation.resume() }
            for operation in waited {
                operation.onCompletion { countdown.tick() }
            }
            countdown.tick()
        }
        watch?.stop()
    }
}
