extension ReferenceModel {
    /// What the model knows about one queue.
    struct QueueState: Sendable {
        /// An entry of the ready list: the operation, the priority it is listed under, and when
        /// it was listed (entries listed in one step share the number: either may start first).
        struct Entry: Hashable, Sendable {
            var op: Int
            var priority: ModelPriority
            var sequence: Int
        }

        let width: Int
        /// The ready list, in the order entries were made.
        var ready: [Entry] = []
        /// Every operation that joined it.
        var members: [Int] = []
        /// Whether something was listed at a moment the model cannot tell (an exclusivity grant,
        /// an operation that its condition added): the start order is not checked in the next
        /// phase that runs the queue.
        var orderUnknown = false
        var keptSuspended = false
        /// Interleaved sequences: suspended now.
        var suspended = false
        var observesOperationsFromHandler = false

        init(width: Int) {
            self.width = width
        }
    }
}
