import Dispatch

extension Op {
    /// Blocks the calling thread until the operation is finished and its completion block has
    /// returned.
    ///
    /// - Important: A wait that could never return traps with an explanation instead of freezing:
    ///   waiting from inside the operation itself, from an operation of a width-1 queue on an
    ///   operation waiting in the same queue, from an operation on an operation that depends on it,
    ///   or from the main thread on an operation of ``OpQueue/main``.
    ///
    /// From `async` code use the `async` overload, which suspends instead of blocking a thread.
    @available(*, noasync, message: "Use `await waitUntilFinished()`, which suspends instead of blocking a thread")
    public final func waitUntilFinished() {
        // Finished for good, or finished and running its completion block on this very thread
        // (it would otherwise wait for itself).
        if withState({ $0.lifecycle == .finished }) || ThreadContext.completingOperation === self { return }
        WaitDeadlocks.checkWait(for: self)
        DependencyCycles.endCycles(reachableFrom: self)
        let semaphore = DispatchSemaphore(value: 0)
        let registered = withState { $0.addWaiter { semaphore.signal() } }
        if registered {
            semaphore.wait()
        }
    }

    /// Registers `waiter` to be called once the operation is finished for good, or calls it now.
    final func onCompletion(_ waiter: @escaping @Sendable () -> Void) {
        if !withState({ $0.addWaiter(waiter) }) {
            waiter()
        }
    }
}
