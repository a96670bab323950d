// Cancelling an operation, and ending one with an error.

extension OpStateMachine {
    /// Prepares `cancel(with:)`: unless the operation has an error or is finished (the first
    /// error wins), `error` becomes its error now if it is cancelled already (returns `true`), or
    /// with the cancellation that follows (``cancel()`` takes it), so that an error never shows
    /// on an operation that is not cancelled.
    mutating func recordCancellationError(_ error: any Error) -> Bool {
        guard !isFinished, self.error == nil else { return false }
        if isCancelled {
            ensureExtras().error = error
            return true
        }
        let extras = ensureExtras()
        if extras.pendingCancellationError == nil { extras.pendingCancellationError = error }
        return false
    }

    // MARK: Cancellation

    /// What cancelling asks the storage to do.
    struct CancelAction: Equatable {
        /// Whether this call cancelled the operation (false if it was cancelled or finished already).
        var didCancel: Bool
        /// Whether the operation was executing (asynchronous bodies are told to stop).
        var wasExecuting: Bool
        /// Scheduling made necessary because cancellation made the operation ready.
        var readiness: ReadinessAction
    }

    mutating func cancel() -> CancelAction {
        guard !isCancelled else { return CancelAction(didCancel: false, wasExecuting: false, readiness: .none) }
        switch lifecycle {
        case .finishing, .finished:
            return CancelAction(didCancel: false, wasExecuting: false, readiness: .none)
        case .pending, .executing:
            isCancelled = true
            if let extras, let pending = extras.pendingCancellationError {
                // From `cancel(with:)`: the error and the cancellation take effect together.
                extras.pendingCancellationError = nil
                if extras.error == nil {
                    extras.error = pending
                    record(.error, old: Optional<any Error>.none as Any, new: extras.error as Any)
                }
            }
            return CancelAction(didCancel: true, wasExecuting: lifecycle == .executing, readiness: scheduleIfReady())
        }
    }

    // MARK: Failing

    /// What ending the operation with an error asks the storage to do.
    enum FailAction {
        /// Nothing: the operation has started or finished already.
        case none
        /// The operation is cancelled and in a queue, which now finishes it without running it.
        case readiness(ReadinessAction)
        /// The operation was in no queue: it is finished now, without running.
        case finish(FinishAction)
    }

    /// Ends a pending operation with `error` (it is on a dependency cycle): it is cancelled and
    /// will not run. One that is in no queue is finished at once, since nothing else would start it.
    mutating func fail(with error: any Error) -> FailAction {
        // An operation already ended with an error (on an earlier cycle) keeps that error.
        guard lifecycle == .pending, self.error == nil else { return .none }
        ensureExtras().error = error
        isCancelled = true
        if queue == nil {
            return .finish(finish())
        }
        return .readiness(scheduleIfReady())
    }

    /// Records the error an executing body threw, unless the operation has one already (it was
    /// cancelled with an error, which says why the body stopped: the first error wins).
    mutating func recordError(_ error: any Error) {
        guard self.error == nil else { return }
        ensureExtras().error = error
    }
}
