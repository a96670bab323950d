extension QueueDump {
    /// One member of the queue: its state, its name and what holds it.
    struct Line: Sendable, Equatable {
        /// Where a member is in its life, as the dump words it.
        enum State: String, Sendable, Equatable {
            /// Its body runs.
            case executing
            /// Its work is over; its completion block has not returned yet.
            case finishing
            /// Pending, and not ready: a dependency has not finished.
            case waiting
            /// Pending and ready (every dependency finished).
            case ready
            /// Pending and cancelled: it finishes without running once its queue starts it.
            case cancelled
        }

        /// The member's state.
        var state: State
        /// The member's description.
        var operation: String
        /// The member's ``Op/queuePriority``.
        var priority: Op.QueuePriority
        /// Whether the member is a barrier (``OpQueue/addBarrierBlock(_:)``).
        var isBarrier: Bool
        /// Whether an executing or finishing member was cancelled (a pending one says so in its
        /// state).
        var isCancelled: Bool
        /// What holds the member, most specific first; empty for an executing or finishing one
        /// that waits for nothing.
        var holds: [Hold]
    }
}
