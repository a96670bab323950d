import Dispatch

/// The process-wide table of mutual-exclusivity categories (see ``OpCondition/mutuallyExclusive(_:)``
/// and ``ExclusivityStateMachine``): takes its lock, runs the machine, and tells the operations
/// whose turn came after unlocking.
///
/// **When an operation asks.** An operation in a queue asks for its categories when its queue
/// starts it: it has a slot, its queue is not suspended, and no barrier holds it back. If they
/// are not available, it gives the slot back and waits, holding nothing; when its turn comes, it
/// goes to the front of its queue's ready list and asks again as the queue starts it. An operation
/// whose queue is suspended does not wait: it goes back on the ready list, and asks (with its
/// place in the order of requests, taken when its conditions passed) once the queue resumed. An
/// operation started by hand asks on the calling thread, which waits for the grant. An operation
/// whose queue already has one of its category asking or holding does not ask at all: it waits in
/// its queue's lane (``OpQueueStateMachine/Lane``) until that one is done.
///
/// **Locks.** The table's lock is the innermost of the library's: a queue tells the table of its
/// suspension with its own lock held, so that the table's copy of "suspended" changes together
/// with the queue's, and a request, which reads the copy, never waits for a suspended queue.
/// Nothing else is locked under the table's lock, and nothing is called or released under it.
enum Exclusivity {
    /// The operation behind a request that waits (the request's payload), kept alive while it
    /// waits or holds, and how to tell it of its turn.
    fileprivate final class Asker {
        let operation: Op
        /// Its queue, if it asks as its queue starts it (withdrawn when the queue is suspended).
        let queue: ObjectIdentifier?
        /// The gate's generation its turn or its suspension is meant for.
        let generation: UInt32
        /// Which of the operation's requests it is (see ``OpStateMachine/Extras/exclusivityAttempt``).
        let attempt: UInt32
        /// Wakes the thread of a `start()` called by hand (its request is granted at its turn).
        let waker: DispatchSemaphore?

        init(operation: Op, queue: ObjectIdentifier?, generation: UInt32, attempt: UInt32, waker: DispatchSemaphore?) {
            self.operation = operation
            self.queue = queue
            self.generation = generation
            self.attempt = attempt
            self.waker = waker
        }
    }

    /// A suspended queue, held weakly: a queue released while suspended is no longer counted
    /// (another queue may get its address).
    private struct SuspendedQueue {
        weak var queue: OpQueue?
    }

    /// The table.
    private struct Table {
        var machine = ExclusivityStateMachine()
        /// The queues that are suspended, as they told (see ``Exclusivity/queue(_:isSuspended:)``).
        var suspendedQueues: [ObjectIdentifier: SuspendedQueue] = [:]

        func isSuspended(_ queue: OpQueue) -> Bool {
            guard !suspendedQueues.isEmpty else { return false }
            return suspendedQueues[ObjectIdentifier(queue)]?.queue === queue
        }

        /// The operation of `operation`'s request, if it holds or waits (the payload of a request
        /// that waits is an `Asker`; of one granted at once, the operation).
        func operation(_ operation: ObjectIdentifier) -> Op? {
            let payload = machine.payload(of: operation)
            return (payload as? Asker)?.operation ?? payload as? Op
        }
    }

    private static let table = LockedBox(Table())

    /// What asking for categories came to.
    enum Outcome: Equatable {
        /// They are the operation's now: it runs.
        case granted
        /// It waits for them, holding nothing; its turn comes later.
        case waiting
        /// Its queue is suspended: it did not ask, and goes back on the ready list.
        case steppedAside
    }

    /// Asks for `operation`'s `categories`, as its `queue` starts it (`nil`: started by hand, and
    /// `waker` is signalled when they are granted). The request takes its place in the order of
    /// requests by `sequence`; `ancestors` are the groups the operation is nested in.
    static func acquire(_ operation: Op, categories: [String], sequence: UInt64, generation: UInt32, attempt: UInt32 = 0,
                        queue: OpQueue?, ancestors: [GroupOp], waker: DispatchSemaphore? = nil) -> Outcome {
        func makeAsker() -> Asker {
            Asker(operation: operation, queue: queue.map(ObjectIdentifier.init), generation: generation,
                  attempt: attempt, waker: waker)
        }
        // The payload of a request granted at once is the operation itself; one that waits gets
        // an `Asker`, which says how to tell it of its turn (most requests in a queue are granted
        // at once: its lane lets one operation of a category ask at a time).
        func makeRequest() -> ExclusivityStateMachine.Request {
            ExclusivityStateMachine.Request(
                operation: ObjectIdentifier(operation), categories: categories,
                ancestors: ancestors.isEmpty ? [] : Set(ancestors.map(ObjectIdentifier.init)),
                sequence: sequence, grantsAtTurn: queue == nil, payload: operation)
        }
        let (outcome, turns): (Outcome, SmallList<ExclusivityStateMachine.Request>) = table.withLockedValue { table in
            // An operation that already finished asks for nothing (it gave back, with `release`,
            // whatever it had; an operation cancelled and finishing meanwhile gives back, after
            // this, what this takes).
            guard !operation.isFinished else { return (.waiting, SmallList()) }
            // An operation whose queue is suspended is granted what is available (its queue
            // started it before it was suspended: it runs now), but does not wait.
            let mayWait = queue.map { !table.isSuspended($0) } ?? true
            // Most often its turn was offered: its request waits already, and is not built again.
            let granted: Bool
            if let again = table.machine.requestAgain(ObjectIdentifier(operation), sequence: sequence, mayWait: mayWait) {
                granted = again
                if !granted && mayWait {
                    // It goes on waiting: its next turn is news for this request, not the last.
                    table.machine.setPayload(of: ObjectIdentifier(operation), makeAsker())
                }
            } else {
                granted = table.machine.request(makeRequest(), mayWait: mayWait)
                // A stale request, refused, made no record: the newer one keeps its payload.
                if !granted && mayWait && table.machine.knows(ObjectIdentifier(operation), sequence: sequence) {
                    table.machine.setPayload(of: ObjectIdentifier(operation), makeAsker())
                }
            }
            if !granted && !mayWait { return (.steppedAside, SmallList()) }
            // Any turns come from an earlier request of the operation, given up (see `request`).
            let turns = table.machine.takeTurnRequests()
            #if OPERATIONS_INTERNAL_CHECKS
            table.machine.checkInvariants()
            #endif
            return (granted ? .granted : .waiting, turns)
        }
        tell(turns)   // after the lock is released
        return outcome
    }

    /// `operation` finished, or no longer asks: gives back its categories (or withdraws its
    /// request) and tells the operations whose turn came. With `sequence`, only what the request
    /// of that sequence number asked for or got.
    static func release(_ operation: Op, sequence: UInt64? = nil) {
        let (released, turns): (AnyObject?, SmallList<ExclusivityStateMachine.Request>) = table.withLockedValue { table in
            let id = ObjectIdentifier(operation)
            if let sequence, !table.machine.knows(id, sequence: sequence) { return (nil, SmallList()) }
            let (released, turns) = table.machine.releaseReturningRequests(id)
            #if OPERATIONS_INTERNAL_CHECKS
            table.machine.checkInvariants()
            #endif
            return (released, turns)
        }
        withExtendedLifetime(released) {}   // its operation is released outside the lock
        tell(turns)
    }

    /// `queue` is suspended or resumed (called with its lock held, as it changes). Suspended,
    /// the requests of its operations are withdrawn, so that they keep nobody waiting while it is,
    /// and no new one waits. Returns what to do once the queue's lock is released.
    ///
    /// - Complexity: O(operations that hold or wait for categories, in every queue) to suspend:
    ///   suspending is rare, and the table is not indexed by queue for it.
    static func queue(_ queue: OpQueue, isSuspended suspended: Bool) -> Suspension {
        table.withLockedValue { table in
            let id = ObjectIdentifier(queue)
            guard suspended else {
                table.suspendedQueues[id] = nil
                return Suspension(steppedAside: [], turns: [])
            }
            // Queues released while suspended are forgotten now and then.
            if table.suspendedQueues.count > 16 {
                table.suspendedQueues = table.suspendedQueues.filter { $0.value.queue != nil }
            }
            table.suspendedQueues[id] = SuspendedQueue(queue: queue)
            let waiting = table.machine.waitingRequests { ($0 as? Asker)?.queue == id }
            guard !waiting.isEmpty else { return Suspension(steppedAside: [], turns: []) }
            var turns: [ExclusivityStateMachine.Request] = []
            for request in waiting {
                turns.append(contentsOf: table.machine.releaseReturningRequests(request.operation).turns)
            }
            #if OPERATIONS_INTERNAL_CHECKS
            table.machine.checkInvariants()
            #endif
            return Suspension(steppedAside: waiting, turns: turns)
        }
    }

    /// What a queue's suspension asks for once its lock is released.
    struct Suspension {
        fileprivate let steppedAside: [ExclusivityStateMachine.Request]
        fileprivate let turns: [ExclusivityStateMachine.Request]

        /// The operations that waited go back on their queue's ready list; those whose turn came
        /// are told.
        func perform() {
            for request in steppedAside {
                if let asker = request.payload as? Asker {
                    asker.operation.exclusivitySteppedAside(generation: asker.generation, attempt: asker.attempt)
                }
            }
            Exclusivity.tell(turns)
        }
    }

    /// Tells the operations whose turn came: one started by hand holds its categories now and its
    /// thread wakes; one in a queue goes to the front of its queue's ready list.
    private static func tell(_ turns: SmallList<ExclusivityStateMachine.Request>) {
        turns.forEach(tell)
    }

    private static func tell(_ turns: [ExclusivityStateMachine.Request]) {
        turns.forEach(tell)
    }

    private static func tell(_ request: ExclusivityStateMachine.Request) {
        // Turns come only to requests that waited, and those carry an `Asker` (see `acquire`).
        guard let asker = request.payload.map({ unsafeDowncast($0, to: Asker.self) }) else { return }
        if let waker = asker.waker {
            waker.signal()
        } else {
            asker.operation.exclusivityTurnCame(generation: asker.generation, attempt: asker.attempt)
        }
    }

    /// What keeps `operation` waiting for its categories (for ``OpQueue/dump()``): `nil` if it
    /// does not wait. The operations are returned, and released by the caller outside the lock.
    static func blockers(of operation: Op) -> [Blocker]? {
        table.withLockedValue { table in
            table.machine.blockers(of: ObjectIdentifier(operation))?.map { blocker in
                Blocker(category: blocker.category,
                        holders: blocker.holders.compactMap { table.operation($0) },
                        earlierRequests: blocker.earlierRequests.compactMap { table.operation($0) })
            }
        }
    }

    /// The operations that hold `category` now, outermost first (for diagnostics and tests).
    static func holders(of category: String) -> [Op] {
        table.withLockedValue { table in
            table.machine.holders(of: category).compactMap { table.operation($0) }
        }
    }

    /// The operations whose requests wait for `category` now, oldest first (for tests).
    static func waiting(in category: String) -> [Op] {
        table.withLockedValue { table in
            table.machine.waiting.filter { $0.categories.contains(category) }.compactMap { table.operation($0.operation) }
        }
    }
}
