extension Op {
    /// The operation whose `async` body the current task is running, if any.
    @TaskLocal static var currentTaskOperation: Op?

    /// Suspends until the operation is finished and its completion block has returned, without
    /// blocking a thread.
    ///
    /// A thousand tasks can await a thousand operations on a handful of threads. Cancelling the
    /// awaiting task does not end the wait and does not cancel the operation (as with `Task.value`);
    /// use ``waitUntilFinished(cancellingOnTaskCancellation:)`` to pass the cancellation on.
    ///
    /// - Important: Awaiting an operation from its own body, or from an operation of a width-1
    ///   queue on an operation waiting in the same queue, or from an operation it depends on, could
    ///   never return; it traps with an explanation instead.
    public final func waitUntilFinished() async {
        guard asyncWaitMustSuspend(inTaskOf: Op.currentTaskOperation) else { return }
        let watch = CycleSearchingWait.watch { DependencyCycles.endCycles(reachableFrom: self) }
        await withCheckedContinuation { continuation in
            onCompletion { continuation.resume() }
        }
        watch?.stop()
    }

    /// Whether an `async` wait for the operation, from the task of the body of `current` (if any),
    /// must suspend, after the wait's checks (a wait that could never return traps): not if it
    /// has finished for good, or if the checks say the wait returns at once.
    final func asyncWaitMustSuspend(inTaskOf current: Op?) -> Bool {
        if withState({ $0.lifecycle == .finished }) { return false }
        if let current, WaitDeadlocks.check(waitFor: self, holds: .task(running: current)) { return false }
        return true
    }

    /// Suspends until the operation is finished; if `cancellingOnTaskCancellation` is `true` and
    /// the awaiting task is cancelled, the operation is cancelled too (and the wait then ends as
    /// soon as the operation finishes, which a well-behaved operation does promptly).
    public final func waitUntilFinished(cancellingOnTaskCancellation: Bool) async {
        guard cancellingOnTaskCancellation else {
            return await waitUntilFinished()
        }
        await withTaskCancellationHandler {
            await waitUntilFinished()
        } onCancel: {
            // Not inline: the handler runs inside the task's cancellation, and cancel() notifies
            // observers (user code).
            WorkerPool.shared.submit(qualityOfService: self.qualityOfService) { self.cancel() }
        }
    }
}
