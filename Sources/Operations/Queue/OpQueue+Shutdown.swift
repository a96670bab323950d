// A graceful shutdown: close, let the work in the queue finish, and cancel what is left once a
// grace period has passed.

extension OpQueue {
    /// Closes the queue (see ``close()``) and suspends until every operation in it has finished;
    /// if `gracePeriod`, measured by `clock`, passes first, cancels those left with
    /// ``OpQueueClosedError`` and waits for them to leave. Returns what came of the operations
    /// that were in the queue when it began.
    ///
    /// ```swift
    /// // On SIGTERM: no new jobs, ten seconds for those queued, then cancel.
    /// let report = await jobs.shutdown(gracePeriod: .seconds(10))
    /// ```
    ///
    /// It always returns, also for a suspended queue: a queue suspended when the grace period
    /// passes is resumed, so that its cancelled operations can leave (they finish without
    /// running). An operation running when the grace period passes is cancelled, counted as
    /// such, and waited for: it should notice its cancellation and return. Operations are never
    /// interrupted. Cancelling the calling task does not shorten the wait.
    ///
    /// - Parameters:
    ///   - gracePeriod: How long the operations in the queue may take before they are cancelled;
    ///     `.zero` cancels them at once.
    ///   - clock: The clock that measures the grace period (a test can pass one it advances by hand).
    /// - Important: Awaiting this from one of the queue's own operations could never return; it
    ///   traps with an explanation instead, as ``waitUntilAllOperationsAreFinished()-3sghu`` does.
    @discardableResult
    public func shutdown(gracePeriod: Duration, clock: any Clock<Duration> = ContinuousClock()) async -> ShutdownReport {
        if let current = Op.currentTaskOperation {
            WaitDeadlocks.check(waitForAllIn: self, holds: .task(running: current))
        }
        close()
        let members = operations
        guard await !emptiesWithin(gracePeriod, clock: clock) else {
            return ShutdownReport(finished: members.count, cancelled: 0)
        }
        let error = closedError
        var cancelled = 0
        for operation in members where !operation.isFinished {
            operation.cancel(with: error)
            cancelled += 1
        }
        // Those that joined since (the operations that conditions contribute) go too.
        let counted = Set(members.map(ObjectIdentifier.init))
        for operation in operations where !counted.contains(ObjectIdentifier(operation)) {
            operation.cancel(with: error)
        }
        if isSuspended { isSuspended = false }
        await waitUntilAllOperationsAreFinished()
        return ShutdownReport(finished: members.count - cancelled, cancelled: cancelled)
    }

    /// Whether the queue becomes empty before `duration` passes on `clock` (suspends until one or
    /// the other; the timer, a Dispatch timer on the continuous clock and a sleep on the library's
    /// executor otherwise, is cancelled if the queue empties first).
    private func emptiesWithin(_ duration: Duration, clock: any Clock<Duration>) async -> Bool {
        await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let pending = LockedBox<CheckedContinuation<Bool, Never>?>(continuation)
            let resolve: @Sendable (Bool) -> Void = { emptied in
                pending.withLockedValue { stored in
                    defer { stored = nil }
                    return stored
                }?.resume(returning: emptied)
            }
            let timer = ClockTimer(after: duration, clock: clock is ContinuousClock ? nil : clock) { resolve(false) }
            let emptied: @Sendable () -> Void = {
                resolve(true)
                timer.cancel()
            }
            if !addEmptyWaiter(emptied) { emptied() }
        }
    }
}
