// Timeouts: an operation cancelled with an `OpTimeoutError` when it runs for too long.

extension Op {
    /// How long the operation may run: measured from the moment it starts executing, and when it
    /// passes before the operation finishes, the operation is cancelled with an
    /// ``OpTimeoutError`` as its ``error``. `nil` (the default) sets no limit.
    ///
    /// Cancelling is all a timeout does, as with any cancellation: a synchronous ``main()``
    /// should check ``isCancelled`` as it goes, and the task of an ``AsyncOp``'s `async` body is
    /// cancelled at once, so `Task.isCancelled`, `try Task.checkCancellation()` and cancellable
    /// waits such as `Task.sleep` see it. No thread waits for the timeout.
    ///
    /// ```swift
    /// let fetch = AsyncOp { try await client.download(url) }
    /// fetch.timeout = .seconds(10)
    /// queue.addOperation(fetch)
    /// ```
    ///
    /// Set it before the operation starts. The first timeout set while the operation runs counts
    /// from the moment it is set; once the timer runs, changing or clearing the timeout disarms it
    /// (a new value is not rescheduled). An operation without a timeout pays nothing for the
    /// feature.
    public final var timeout: Duration? {
        get { withState { $0.timeout } }
        set {
            let needsTracker = withState { machine in
                machine.timeout = newValue
                guard newValue != nil, !machine.hasTimeoutTracker else { return false }
                machine.hasTimeoutTracker = true
                return true
            }
            if needsTracker {
                addObserver(TimeoutTracker())
            }
        }
    }
}

/// Starts the timer of an operation's ``Op/timeout`` when the operation starts executing, and
/// stops it when the operation's work is over. An observer, so that an operation without a
/// timeout pays nothing.
final class TimeoutTracker: OpObserver, Sendable {
    private struct State {
        var timer: DeadlineTimer?
        var isOver = false
    }

    private let state = LockedBox(State())

    func didAttach(to operation: Op) {
        // Set while the operation runs: it counts from now.
        if operation.isExecuting {
            start(for: operation)
        }
    }

    func willExecute(_ operation: Op) {
        start(for: operation)
    }

    func willFinish(_ operation: Op, error: (any Error)?) {
        stop()
    }

    func didFinish(_ operation: Op, error: (any Error)?) {
        stop()
    }

    private func start(for operation: Op) {
        guard let timeout = operation.timeout else { return }
        let timer = DeadlineTimer(after: timeout, qualityOfService: operation.qualityOfService) { [self] in
            timedOut(operation, timeout: timeout)
        }
        let unneeded: DeadlineTimer? = state.withLockedValue { state in
            if state.isOver { return timer }   // the work is over already
            defer { state.timer = timer }
            return state.timer
        }
        unneeded?.cancel()
    }

    private func stop() {
        let timer = state.withLockedValue { state in
            state.isOver = true
            defer { state.timer = nil }
            return state.timer
        }
        timer?.cancel()
    }

    private func timedOut(_ operation: Op, timeout: Duration) {
        // The work is over (its `willFinish` was delivered): the operation succeeded in time.
        guard !state.withLockedValue({ $0.isOver }) else { return }
        // Cleared or changed after it started: the timeout no longer applies.
        guard operation.timeout == timeout, !operation.isFinished else { return }
        operation.cancel(with: OpTimeoutError(timeout: timeout, operation: operation.description))
    }
}
