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
/// operation started by hand asks on the calling thread, which waits for the grant.
///
/// **Locks.** The table's lock is taken last: a queue asks (and tells of its suspension) with its
/// own lock held, so that no request of an operation of a suspended queue can wait; nothing else
/// of the library is locked under the table's lock, and nothing is called or released under it.
enum Exclusivity {
    /// One operation that holds or waits, kept alive while it does.
    fileprivate struct Entry {
        let operation: Op
        /// Its queue, if it waits as its queue started it (withdrawn when the queue is suspended).
        let queue: ObjectIdentifier?
        /// The gate's generation its turn or its suspension is meant for.
        let generation: UInt32
        /// Wakes the thread of a `start()` called by hand (its request is granted at its turn).
        let waker: DispatchSemaphore?
    }

    /// The table and the operations it names.
    private struct Table {
        var machine = ExclusivityStateMachine()
        var entries: [ObjectIdentifier: Entry] = [:]

        /// The entries of the operations whose turn came.
        func turns(_ operations: [ObjectIdentifier]) -> [Entry] {
            operations.compactMap { entries[$0] }
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
    static func acquire(_ operation: Op, categories: [String], sequence: UInt64, generation: UInt32,
                        queue: OpQueue?, ancestors: [GroupOp], waker: DispatchSemaphore? = nil) -> Outcome {
        let request = ExclusivityStateMachine.Request(
            operation: ObjectIdentifier(operation), categories: categories,
            ancestors: ancestors.isEmpty ? [] : Set(ancestors.map(ObjectIdentifier.init)),
            sequence: sequence, grantsAtTurn: queue == nil)
        let entry = Entry(operation: operation, queue: queue.map(ObjectIdentifier.init), generation: generation, waker: waker)
        let (outcome, turns): (Outcome, [Entry])
        if let queue {
            // With the queue's lock held: its suspension cannot slip in between (see
            // `queueSuspended`).
            (outcome, turns) = queue.withLock {
                queue.machine.isSuspended ? (.steppedAside, []) : ask(request, entry)
            }
        } else {
            (outcome, turns) = ask(request, entry)
        }
        tell(turns)   // after every lock is released
        return outcome
    }

    private static func ask(_ request: ExclusivityStateMachine.Request, _ entry: Entry) -> (Outcome, [Entry]) {
        table.withLockedValue { table in
            // An operation that already finished asks for nothing (it gave back, with `release`,
            // whatever it had; an operation cancelled and finishing meanwhile gives back, after
            // this, what this takes).
            guard !entry.operation.isFinished else { return (.waiting, []) }
            let granted = table.machine.request(request)
            // Any turns come from an earlier request of the operation, given up (see `request`).
            let turned = table.machine.takeTurns()
            // The entry replaced, if any, is the same operation's: the new one keeps it alive.
            table.entries[request.operation] = entry
            #if OPERATIONS_INTERNAL_CHECKS
            table.machine.checkInvariants()
            #endif
            return (granted ? .granted : .waiting, table.turns(turned))
        }
    }

    /// `operation` finished, or no longer asks: gives back its categories (or withdraws its
    /// request) and tells the operations whose turn came. With `sequence`, only what the request
    /// of that sequence number asked for or got.
    static func release(_ operation: Op, sequence: UInt64? = nil) {
        let (released, turns): (Entry?, [Entry]) = table.withLockedValue { table in
            let id = ObjectIdentifier(operation)
            if let sequence, !table.machine.knows(id, sequence: sequence) { return (nil, []) }
            guard let released = table.entries.removeValue(forKey: id) else { return (nil, []) }
            // Two statements: evaluating `table.turns` first would keep a copy of the table while
            // `release` changes it, and copy its dictionaries.
            let turned = table.machine.release(id)
            let turns = table.turns(turned)
            #if OPERATIONS_INTERNAL_CHECKS
            table.machine.checkInvariants()
            #endif
            return (released, turns)
        }
        withExtendedLifetime(released) {}   // the operation is released outside the lock
        tell(turns)
    }

    /// `queue` is being suspended (called with its lock held): the requests of its operations are
    /// withdrawn, so that they keep nobody waiting while it is. Returns what to do once the queue's
    /// lock is released.
    ///
    /// - Complexity: O(operations that hold or wait for categories, in every queue): suspending
    ///   is rare, and the table is not indexed by queue for it.
    static func queueSuspended(_ queue: OpQueue) -> Suspension {
        table.withLockedValue { table in
            let id = ObjectIdentifier(queue)
            let waiting = table.entries.filter { $0.value.queue == id && table.machine.isWaiting($0.key) }
            guard !waiting.isEmpty else { return Suspension(steppedAside: [], turns: []) }
            var steppedAside: [Entry] = []
            var turns: [Entry] = []
            for (operation, entry) in waiting {
                table.entries[operation] = nil
                steppedAside.append(entry)
                let turned = table.machine.release(operation)
                turns += table.turns(turned)
            }
            #if OPERATIONS_INTERNAL_CHECKS
            table.machine.checkInvariants()
            #endif
            return Suspension(steppedAside: steppedAside, turns: turns)
        }
    }

    /// What a queue's suspension asks for once its lock is released.
    struct Suspension {
        fileprivate let steppedAside: [Entry]
        fileprivate let turns: [Entry]

        /// The operations that waited go back on their queue's ready list; those whose turn came
        /// are told.
        func perform() {
            for entry in steppedAside {
                entry.operation.exclusivitySteppedAside(generation: entry.generation)
            }
            Exclusivity.tell(turns)
        }
    }

    /// Tells the operations whose turn came: one started by hand holds its categories now and its
    /// thread wakes; one in a queue goes to the front of its queue's ready list.
    private static func tell(_ turns: [Entry]) {
        for entry in turns {
            if let waker = entry.waker {
                waker.signal()
            } else {
                entry.operation.exclusivityTurnCame(generation: entry.generation)
            }
        }
    }

    /// What keeps `operation` waiting for its categories (for ``OpQueue/dump()``): `nil` if it
    /// does not wait. The operations are returned, and released by the caller outside the lock.
    static func blockers(of operation: Op) -> [Blocker]? {
        table.withLockedValue { table in
            table.machine.blockers(of: ObjectIdentifier(operation))?.map { blocker in
                Blocker(category: blocker.category,
                        holders: blocker.holders.compactMap { table.entries[$0]?.operation },
                        earlierRequests: blocker.earlierRequests.compactMap { table.entries[$0]?.operation })
            }
        }
    }

    /// The operations that hold `category` now, outermost first (for diagnostics and tests).
    static func holders(of category: String) -> [Op] {
        table.withLockedValue { table in
            table.machine.holders(of: category).compactMap { table.entries[$0]?.operation }
        }
    }
}
