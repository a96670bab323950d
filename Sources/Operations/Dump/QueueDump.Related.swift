extension QueueDump {
    /// An operation named in a hold (a dependency, a barrier, a holder of a category), with its
    /// state and, if it is not in the dumped queue, where it is.
    struct Related: Sendable, Equatable {
        /// The operation's description.
        var operation: String
        /// `executing`, `finishing`, `finished`, `waiting`, `ready` or `cancelled`.
        var state: String
        /// Where it is if not in the dumped queue: `in OpQueue "x"`, `child of GroupOp "g"`,
        /// `in no queue`; `nil` for a member of the dumped queue.
        var place: String?
    }
}
