extension OpQueueStateMachine {
    /// The operations of one queue that ask for the same single mutual-exclusivity category, as
    /// the queue starts them.
    ///
    /// The first one started (the lane's *head*) asks the exclusivity table and waits there, or
    /// holds the category and runs. The others would only wait behind it, one after the other;
    /// they wait here instead, *parked*: each keeps its live ready-list entry, holds no slot and
    /// asks the table nothing. When the head leaves the queue (or stops asking: a dependency
    /// added, a start that came to nothing), the next parked operation becomes the head and goes
    /// to the front of the ready lists. So an operation of a contended category passes through its
    /// queue once, not twice, and the table sees one request per queue and category at a time.
    ///
    /// The table still decides who holds a category: a lane only keeps operations of one queue
    /// from asking while an earlier one of them asks or holds. Among them, the queue's order
    /// decides (priority, then the order they became ready). A cancelled operation is never
    /// parked, and one cancelled while parked goes to the front of the ready lists at once, to
    /// finish without running.
    ///
    /// A reference type, reached from the queue by category and from its head by identity, and
    /// changed in place (a dictionary of values would copy or look up again on each change).
    /// Only touched with the queue's lock held, like the rest of the scheduler.
    ///
    /// Its variables skip the runtime's exclusivity checks in normal builds, as the scheduler's
    /// other lock-guarded state does (see `Lock.swift`): the queue's lock serializes every access,
    /// and the checks cost three calls per operation of a contended category. The checked build
    /// keeps them.
    final class Lane {
        /// The category.
        let category: String
        #if OPERATIONS_INTERNAL_CHECKS
        /// The operation that asks or holds, if any.
        var head: ObjectIdentifier?
        /// The entries of the operations waiting behind it, in the order the queue started them;
        /// an entry whose operation is no longer parked (rescheduled, cancelled) is dropped when
        /// its turn comes.
        var parked = RingBuffer<Entry>()
        #else
        /// The operation that asks or holds, if any.
        @exclusivity(unchecked) var head: ObjectIdentifier?
        /// The entries of the operations waiting behind it, in the order the queue started them;
        /// an entry whose operation is no longer parked (rescheduled, cancelled) is dropped when
        /// its turn comes.
        @exclusivity(unchecked) var parked = RingBuffer<Entry>()
        #endif

        init(category: String) {
            self.category = category
        }

        var isIdle: Bool { head == nil && parked.isEmpty }

        /// Takes out the next parked entry whose operation is still parked (see
        /// ``Op/QueueMembership/isParked``); those before it, stale, go to `stale`.
        func takeNextParked(droppingStaleInto stale: inout [Entry]) -> Entry? {
            while let entry = parked.popFirst() {
                let operation = entry.operation
                if operation.membership.isParked && operation.membership.hasLiveReadyEntry
                    && operation.membership.readyTicket == entry.ticket && operation.membership.slot >= 0 {
                    operation.membership.isParked = false
                    return entry
                }
                stale.append(entry)   // no longer parked: rescheduled or cancelled since
            }
            return nil
        }
    }
}
