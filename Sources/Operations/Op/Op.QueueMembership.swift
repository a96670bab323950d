extension Op {
    /// The fields of an operation that belong to the queue it is in: where it sits in the member
    /// list, which barriers come before it, and which of its ready-list entries is the live one.
    ///
    /// Guarded by the lock of the operation's queue, not by the operation's own stripe: they are
    /// read and written only by ``OpQueueStateMachine`` and ``MemberList`` with that lock held.
    /// `isBarrier` is the one exception: ``OpQueue/addBarrierBlock(_:)`` sets it before adding
    /// the operation, and the queue's lock publishes it from there on.
    ///
    /// Sixteen bytes, widest field first (a pending operation is kept small).
    struct QueueMembership {
        /// How many barriers of its queue were added before the operation.
        var epoch = 0
        private var storedSlot: Int32 = -1
        /// The ticket of the live ready-list entry; entries with other tickets are stale.
        var readyTicket: Op.Ticket = 0
        /// Whether the queue treats the operation as a barrier.
        var isBarrier = false
        /// Whether the queue holds a live (not stale) ready-list entry for the operation.
        var hasLiveReadyEntry = false

        /// The operation's position in its queue's ``MemberList``; -1 outside a queue.
        var slot: Int {
            get { Int(storedSlot) }
            set { storedSlot = Int32(newValue) }
        }
    }

    /// Tells a ready-list entry of an operation from its newer ones: it changes each time the
    /// operation is scheduled anew (a new priority while it waits), and wraps.
    ///
    /// Sixteen bits: entries are compared with ``isNewer(_:than:)``, which holds while fewer than
    /// 32,768 schedulings of one operation are in flight at once, and a live entry is told from a
    /// stale one by equality, which at worst (after 65,536 priority changes of one waiting
    /// operation) starts the operation from an older place in its ready list.
    typealias Ticket = UInt16

    /// Whether `ticket` was handed out after `other`.
    static func isNewer(_ ticket: Ticket, than other: Ticket) -> Bool {
        Int16(bitPattern: ticket &- other) > 0
    }
}
