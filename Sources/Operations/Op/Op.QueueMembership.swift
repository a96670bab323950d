extension Op {
    /// The fields of an operation that belong to the queue it is in: where it sits in the member
    /// list, which barriers come before it, and which of its ready-list entries is the live one.
    ///
    /// Guarded by the lock of the operation's queue, not by the operation's own stripe: they are
    /// read and written only by ``OpQueueStateMachine`` and ``MemberList`` with that lock held.
    /// `isBarrier` is the one exception: ``OpQueue/addBarrierBlock(_:)`` sets it before adding
    /// the operation, and the queue's lock publishes it from there on.
    struct QueueMembership {
        /// The operation's position in its queue's ``MemberList``; -1 outside a queue.
        var slot = -1
        /// How many barriers of its queue were added before the operation.
        var epoch = 0
        /// Whether the queue treats the operation as a barrier.
        var isBarrier = false
        /// Whether the queue holds a live (not stale) ready-list entry for the operation.
        var hasLiveReadyEntry = false
        /// The ticket of that entry; entries with other tickets are stale.
        var readyTicket: UInt32 = 0
    }
}
