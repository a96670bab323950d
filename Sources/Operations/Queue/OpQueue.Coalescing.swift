extension OpQueue {
    /// What ``OpQueue/addOperation(_:coalescingKey:policy:)`` does when an unfinished operation
    /// added with the same key is in the queue.
    public enum Coalescing: Sendable, Equatable {
        /// The new operation is not added (it is left untouched); the one in the queue, waiting or
        /// running, is returned, so that every caller awaits the same work (one download per URL).
        case joinExisting
        /// The operation in the queue is cancelled if it has not started (one that runs is left
        /// to finish), and the new one is added and returned: the latest request wins (a search
        /// as the user types).
        case replacePending
    }
}
