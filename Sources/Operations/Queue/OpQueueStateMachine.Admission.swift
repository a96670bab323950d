extension OpQueueStateMachine {
    /// The queue's admission control, a state machine of its own beside the scheduler, under the
    /// queue's lock: the bound that ``OpQueue/tryAddOperation(_:)`` and ``OpQueue/enqueue(_:)``
    /// respect, the room promised to adders on their way in, whether the queue is closed, and the
    /// adders that wait for room (first come, first served). The scheduler counts the pending
    /// members (``OpQueueStateMachine/pendingCount``) and each event is given that count: the
    /// path of an operation touches no field of this (kept out of the scheduler, whose size
    /// every event pays for).
    ///
    /// Foundation-style adds are never refused or held back: they count as pending, which only
    /// leaves less room for the adders that respect the bound.
    ///
    /// - Complexity: O(1) amortised per event: a waiter that leaves early (its task cancelled) is
    ///   dropped from the table at once and from the line when it reaches the front.
    struct Admission {
        /// An adder waiting for room: told once, with `nil` when room was reserved for it, or with
        /// the error that ends its wait (the queue closed).
        struct Waiter {
            let id: UInt64
            let resume: @Sendable ((any Error)?) -> Void
        }

        /// Adders to tell, and what: `nil` for room reserved, or the error that ends their wait.
        typealias Told = [(waiter: Waiter, error: (any Error)?)]

        /// The most pending members that the adders that respect the bound leave in the queue.
        private(set) var maxPending = Int.max
        /// Room promised to adders on their way in (their operations are not members yet).
        private(set) var reserved = 0
        /// Whether the queue takes no new operations.
        private(set) var isClosed = false
        /// The ids of the waiting adders in the order they came; ids no longer in `waiters` are
        /// dropped when they reach the front.
        private var line = RingBuffer<UInt64>()
        /// The waiting adders, by id.
        private var waiters: [UInt64: Waiter] = [:]
        private var nextWaiterID: UInt64 = 0
        /// Adders told of room (or of the closing) by the last events; the storage tells them
        /// after unlocking.
        private(set) var told: Told = []

        /// Whether an adder that respects the bound may add one operation now, `pending` members
        /// being pending.
        func hasRoom(pending: Int) -> Bool { !isClosed && pending + reserved < maxPending && waiters.isEmpty }

        /// Whether anybody waits for room (checked before anything else on the hot paths).
        var hasWaiters: Bool { !waiters.isEmpty }

        /// How many adders wait for room.
        var waiterCount: Int { waiters.count }

        /// Entries in the line of waiters, withdrawn ones included (for the complexity tests).
        var lineLength: Int { line.count }

        // MARK: Events

        /// The pending members are `pending` now, fewer than before (one started or left): the
        /// waiting adders get the room (call only if ``hasWaiters``).
        mutating func pendingDecreased(to pending: Int) {
            grantWhileRoom(pending: pending)
        }

        /// Reserves room for one operation if there is some (see ``hasRoom``).
        mutating func reserve(pending: Int) -> Bool {
            guard hasRoom(pending: pending) else { return false }
            reserved += 1
            return true
        }

        /// A reservation's operation joined (the scheduler counts it pending from now on, so no
        /// room opens), or its adder gave up because the queue closed (which took every waiter).
        mutating func reservationUsed() {
            precondition(reserved > 0, "Internal inconsistency: a reservation used with none made")
            reserved -= 1
        }

        /// An adder waits for room: returns its id, to withdraw it with ``withdraw(_:)``.
        mutating func wait(resume: @escaping @Sendable ((any Error)?) -> Void) -> UInt64 {
            nextWaiterID &+= 1
            let id = nextWaiterID
            waiters[id] = Waiter(id: id, resume: resume)
            line.append(id)
            return id
        }

        /// The adder `id` stops waiting (its task was cancelled). Returns it if it was still
        /// waiting (the caller tells it); `nil` if room was reserved for it already.
        mutating func withdraw(_ id: UInt64, pending: Int) -> Waiter? {
            guard let waiter = waiters.removeValue(forKey: id) else { return nil }
            if waiters.isEmpty {
                _ = line.removeAll()
            } else {
                grantWhileRoom(pending: pending)   // the ones behind it may go now
                if line.count > 32 && line.count > 2 * waiters.count {
                    // Withdrawn ones behind a waiting front are dropped once they are most of it.
                    let live = line.removeAll().filter { waiters[$0] != nil }
                    live.forEach { line.append($0) }
                }
            }
            return waiter
        }

        /// The bound changed.
        mutating func setMaxPending(_ count: Int, pending: Int) {
            maxPending = count
            if !waiters.isEmpty { grantWhileRoom(pending: pending) }
        }

        /// The queue closes: every waiting adder is told `error`.
        mutating func close(_ error: any Error) {
            isClosed = true
            while let id = line.popFirst() {
                if let waiter = waiters.removeValue(forKey: id) { told.append((waiter, error)) }
            }
        }

        /// Hands over the adders to tell.
        mutating func takeTold() -> Told {
            defer { told = [] }
            return told
        }

        /// Reserves room for the waiting adders, first come first served, while there is some.
        private mutating func grantWhileRoom(pending: Int) {
            while !isClosed, pending + reserved < maxPending, let id = line.first {
                _ = line.popFirst()
                guard let waiter = waiters.removeValue(forKey: id) else { continue }   // withdrawn
                reserved += 1
                told.append((waiter, nil))
            }
        }
    }
}
