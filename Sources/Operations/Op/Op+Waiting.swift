import Dispatch

extension Op {
    /// Blocks the calling thread until the operation is finished and its completion block has
    /// returned.
    ///
    /// If the operation is on a dependency cycle, or waits for one, the cycle is ended once the
    /// wait has lasted a moment (see ``DependencyCycleError``), so the wait returns.
    ///
    /// - Important: A wait that could never return traps with an explanation instead of freezing:
    ///   waiting from inside the operation itself, from an operation of a width-1 queue on an
    ///   operation waiting in the same queue, from an operation on an operation that depends on it,
    ///   from an observer callback that holds the operation up before it reads as finished (or
    ///   that holds up an operation it waits for: see <doc:ObservingOperations#Delivery-rules>),
    ///   or from the main thread on an operation of ``OpQueue/main``. From such a callback once
    ///   the operation reads as finished, or from its own completion block, the wait returns at
    ///   once; any other callback steps aside while it waits.
    ///
    /// From `async` code use the `async` overload, which suspends instead of blocking a thread.
    /// In top-level code (a `main.swift` that uses `await`), Swift 6.3 still resolves
    /// `await op.waitUntilFinished()` to this overload and reports it as unavailable: await the
    /// operation from an `async` function instead, or call
    /// ``waitUntilFinished(cancellingOnTaskCancellation:)``, which has no blocking twin.
    @available(*, noasync, message: "Use `await waitUntilFinished()`, which suspends instead of blocking a thread; in top-level code, where Swift picks this overload even after `await`, await it from an `async` function")
    public final func waitUntilFinished() {
        SynchronousWaitsInTasks.note(.operation, target: description)
        guard blockingWaitMustBlock() else { return }
        let semaphore = DispatchSemaphore(value: 0)
        let registered = withState { $0.addWaiter { semaphore.signal() } }
        if registered {
            CycleSearchingWait.block(on: semaphore) { DependencyCycles.endCycles(reachableFrom: self) }
        }
    }

    /// Whether a blocking wait for the operation must block, after the wait's checks (a wait that
    /// could never return traps): not if it has finished for good, or is finished and runs its
    /// completion block on this very thread (it would otherwise wait for itself), or if the
    /// checks say the wait returns at once.
    final func blockingWaitMustBlock() -> Bool {
        if withState({ $0.lifecycle == .finished }) || ThreadContext.completingOperation === self { return false }
        return !WaitDeadlocks.checkWait(for: self)
    }

    /// Registers `waiter` to be called once the operation is finished for good, or calls it now.
    final func onCompletion(_ waiter: @escaping @Sendable () -> Void) {
        if !withState({ $0.addWaiter(waiter) }) {
            waiter()
        }
    }
}
