extension OpQueue {
    /// What a ``OpQueue/shutdown(gracePeriod:clock:)`` came to, counting the operations that were
    /// in the queue when it began.
    ///
    /// ```swift
    /// let report = await queue.shutdown(gracePeriod: .seconds(10))
    /// log.info("queue drained: \(report.finished) finished, \(report.cancelled) cancelled")
    /// ```
    public struct ShutdownReport: Sendable, Equatable, CustomStringConvertible {
        /// The operations that finished without being cancelled by the shutdown (those that
        /// failed, or that something else cancelled, included).
        public let finished: Int
        /// The operations that the shutdown cancelled when its grace period passed, those still
        /// running then included.
        public let cancelled: Int

        /// Creates a report of `finished` and `cancelled` operations.
        public init(finished: Int, cancelled: Int) {
            self.finished = finished
            self.cancelled = cancelled
        }

        /// Both counts.
        public var description: String {
            "\(finished) finished, \(cancelled) cancelled by the shutdown"
        }
    }
}
