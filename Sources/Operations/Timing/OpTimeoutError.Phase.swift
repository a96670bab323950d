extension OpTimeoutError {
    /// When a timeout passed: while the operation waited to start, or while it ran.
    ///
    /// ``Op/timeout`` always passes while the operation runs; ``Op/totalTimeout`` passes in
    /// either phase:
    ///
    /// ```swift
    /// report.totalTimeout = .seconds(30)
    /// report.completionBlock = {
    ///     if let timedOut = report.error as? OpTimeoutError, timedOut.phase == .waiting {
    ///         print("never started: the queue was too busy")
    ///     }
    /// }
    /// ```
    public enum Phase: Sendable, Equatable {
        /// Before the operation started: it waited (for dependencies, conditions, a limit or
        /// its queue) and left without running.
        case waiting
        /// While the operation ran: it was cancelled, as any cancellation, and its body saw it.
        case running
    }
}
