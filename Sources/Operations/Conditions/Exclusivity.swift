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
/// **Counted categories.** The same table keeps, under the same lock, the counted categories of
/// ``OpCondition/limited(_:permits:)`` and ``OpCondition/rateLimited(_:permits:per:clock:)``
/// (``LimitStateMachine``), asked for by the same protocol: an operation with both asks for its
/// exclusive categories first and, once it holds them, for its counted ones; waiting for either,
/// it gives its slot back, and its turn puts it at the front of its ready list. One lock for both
/// kinds lets a name used both ways be caught as it is asked for. Operations with counted
/// categories have no lane (several may hold one). An operation whose only gate is one limit
/// takes and gives back its permit without the lock while nobody waits for it (see
/// ``LimitStateMachine/Category``); it comes here only when the permit is not free at once.
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
        /// The operation's counted categories, taken once its exclusive ones are held.
        let limits: [OpLimit]
        /// The request's place in the order of requests.
        let sequence: UInt64

        init(operation: Op, queue: ObjectIdentifier?, generation: UInt32, attempt: UInt32, waker: DispatchSemaphore?,
             limits: [OpLimit], sequence: UInt64) {
            self.operation = operation
            self.queue = queue
            self.generation = generation
            self.attempt = attempt
            self.waker = waker
            self.limits = limits
            self.sequence = sequence
        }
    }

    /// The table.
    private struct Table {
        var machine = ExclusivityStateMachine()
        /// The counted categories (limits and rate limits), under the same lock, so that a name
        /// declared both ways is caught at once.
        var limits = LimitStateMachine()
        /// The queues that are suspended, as they told (see ``Exclusivity/queue(_:isSuspended:)``).
        /// By identity only, without a reference: a queue released while suspended takes itself
        /// out as it is deinitialized (``Exclusivity/forgetSuspendedQueue(_:)``), before another
        /// object can get its address. (A weak reference would give every queue ever suspended a
        /// side table, and send its retains and releases down the runtime's slow path.)
        var suspendedQueues: Set<ObjectIdentifier> = []

        func isSuspended(_ queue: OpQueue) -> Bool {
            guard !suspendedQueues.isEmpty else { return false }
            return suspendedQueues.contains(ObjectIdentifier(queue))
        }

        /// The operation of `operation`'s request, if it holds or waits (the payload of a request
        /// that waits is an `Asker`; of one granted at once, the operation).
        func operation(_ operation: ObjectIdentifier) -> Op? {
            let payload = machine.payload(of: operation)
            return (payload as? Asker)?.operation ?? payload as? Op
        }

        /// What asking for counted categories came to (see ``Exclusivity/askLimits``).
        struct LimitsAnswer {
            var outcome: Outcome
            /// The limits whose intervals begin now (rate limits of a grant).
            var startsIntervals: [OpLimit] = []
            /// Turns of exclusive categories given back (a refused request gave them up).
            var turns = SmallList<ExclusivityStateMachine.Request>()
            /// Turns of counted categories given back (a refused request gave back what it took).
            var limitTurns: [LimitStateMachine.Turn] = []
            /// A category declared with other permits than those it is used with.
            var mismatch: (category: String, inUse: OpLimit.Spec, declared: OpLimit.Spec)?
            /// The category whose permit the operation holds without a record, to give back
            /// without the table (see ``LimitStateMachine/dropGrantedRecord(of:)``).
            var held: LimitStateMachine.Category?
        }

        /// Asks for `operation`'s counted categories, its exclusive ones (if any) being held now.
        /// Refused (its queue is suspended), it gives those back too, and steps aside.
        mutating func askLimits(_ operation: Op, limits: [OpLimit], sequence: UInt64, mayWait: Bool,
                                grantsAtTurn: Bool, asker: () -> Asker) -> LimitsAnswer {
            let id = ObjectIdentifier(operation)
            let request = LimitStateMachine.Request(operation: id, limits: limits, sequence: sequence,
                                                    grantsAtTurn: grantsAtTurn, payload: operation)
            // A name in use as an exclusive category is a mismatch; the counted category just
            // used is not one (both cannot be in use at once), which spares hashing its name.
            for limit in limits where !self.limits.isRecentlyInUse(limit.category) && machine.isInUse(limit.category) {
                return LimitsAnswer(outcome: .waiting, mismatch: (limit.category, OpLimit.Spec(permits: 1, interval: nil), limit.spec))
            }
            switch self.limits.request(request, mayWait: mayWait) {
            case .granted(let startsIntervals):
                return LimitsAnswer(outcome: .granted,
                                    startsIntervals: startsIntervals ? limits.filter { $0.spec.interval != nil } : [])
            case .waiting:
                self.limits.setPayload(of: id, asker())
                return LimitsAnswer(outcome: .waiting)
            case .refused:
                return LimitsAnswer(outcome: .steppedAside, turns: machine.releaseReturningRequests(id).turns,
                                    limitTurns: self.limits.takeTurns())
            case .mismatch(let category, let inUse, let declared):
                return LimitsAnswer(outcome: .waiting, mismatch: (category, inUse, declared))
            }
        }

        /// Traps if one of `categories` (exclusive) is in use as a counted category; retires
        /// an unused counted entry of the same name (see ``LimitStateMachine/claimForExclusiveUse(_:)``).
        mutating func checkExclusive(_ categories: [String]) {
            for category in categories {
                if let spec = limits.claimForExclusiveUse(category) {
                    LimitStateMachine.mismatch(category, spec, OpLimit.Spec(permits: 1, interval: nil))
                }
            }
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
    ///
    /// An operation with counted categories (`limits`) asks for them once its exclusive ones are
    /// held, and holds those while it waits for the counted ones (see ``LimitStateMachine``).
    static func acquire(_ operation: Op, categories: [String], limits: [OpLimit] = [], sequence: UInt64, generation: UInt32,
                        attempt: UInt32 = 0, queue: OpQueue?, ancestors: [GroupOp], waker: DispatchSemaphore? = nil) -> Outcome {
        acquireReturningHeld(operation, categories: categories, limits: limits, sequence: sequence, generation: generation,
                             attempt: attempt, queue: queue, ancestors: ancestors, waker: waker).outcome
    }

    /// ``acquire(_:categories:limits:sequence:generation:attempt:queue:ancestors:waker:)``, which
    /// also returns the category whose permit a granted operation holds without a record (one
    /// limit, no interval, no exclusive category, asked as its queue starts it): it gives that
    /// permit back by ``giveBack(_:)``, not ``release(_:sequence:)``.
    static func acquireReturningHeld(_ operation: Op, categories: [String], limits: [OpLimit], sequence: UInt64,
                                     generation: UInt32, attempt: UInt32, queue: OpQueue?, ancestors: [GroupOp],
                                     waker: DispatchSemaphore? = nil) -> (outcome: Outcome, held: LimitStateMachine.Category?) {
        func makeAsker() -> Asker {
            Asker(operation: operation, queue: queue.map(ObjectIdentifier.init), generation: generation,
                  attempt: attempt, waker: waker, limits: limits, sequence: sequence)
        }
        if !limits.isEmpty {
            return acquireWithLimits(operation, categories: categories, limits: limits, sequence: sequence,
                                     queue: queue, ancestors: ancestors, makeAsker: makeAsker)
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
                table.checkExclusive(categories)
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
        return (outcome, nil)
    }

    /// `operation` finished, or no longer asks: gives back its categories (or withdraws its
    /// request) and tells the operations whose turn came. With `sequence`, only what the request
    /// of that sequence number asked for or got.
    static func release(_ operation: Op, sequence: UInt64? = nil) {
        let (released, turns, limitTurns): (AnyObject?, SmallList<ExclusivityStateMachine.Request>, [LimitStateMachine.Turn]) = table.withLockedValue { table in
            let id = ObjectIdentifier(operation)
            var limitTurns: [LimitStateMachine.Turn] = []
            var releasedLimits: AnyObject?
            if !table.limits.hasNoRecords {
                releasedLimits = table.limits.release(id, sequence: sequence)
                limitTurns = table.limits.takeTurns()
            }
            guard table.machine.hasRequests else { return (releasedLimits, SmallList(), limitTurns) }
            if let sequence, !table.machine.knows(id, sequence: sequence) { return (releasedLimits, SmallList(), limitTurns) }
            let (released, turns) = table.machine.releaseReturningRequests(id)
            #if OPERATIONS_INTERNAL_CHECKS
            table.machine.checkInvariants()
            table.limits.checkInvariants()
            #endif
            return (released ?? releasedLimits, turns, limitTurns)
        }
        withExtendedLifetime(released) {}   // its operation is released outside the lock
        tell(turns)
        tell(limitTurns)
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
                table.suspendedQueues.remove(id)
                return Suspension(steppedAside: [], turns: [])
            }
            table.suspendedQueues.insert(id)
            let waiting = table.machine.waitingRequests { ($0 as? Asker)?.queue == id }
            // Those that hold their exclusive categories and wait for counted ones (or were
            // offered them) give back both.
            let waitingForLimits = table.limits.hasNoRecords ? [] : table.limits.withdrawWaiting { ($0 as? Asker)?.queue == id }
            guard !waiting.isEmpty || !waitingForLimits.isEmpty else { return Suspension(steppedAside: [], turns: []) }
            var turns: [ExclusivityStateMachine.Request] = []
            for request in waiting {
                turns.append(contentsOf: table.machine.releaseReturningRequests(request.operation).turns)
            }
            for request in waitingForLimits {
                turns.append(contentsOf: table.machine.releaseReturningRequests(request.operation).turns)
            }
            let limitTurns = table.limits.takeTurns()
            #if OPERATIONS_INTERNAL_CHECKS
            table.machine.checkInvariants()
            table.limits.checkInvariants()
            #endif
            return Suspension(steppedAside: waiting.compactMap { $0.payload as? Asker } + waitingForLimits.compactMap { $0.payload as? Asker },
                              turns: turns, limitTurns: limitTurns)
        }
    }

    /// Whether the table counts the queue with `id` as suspended (for tests).
    static func countsAsSuspended(_ id: ObjectIdentifier) -> Bool {
        table.withLockedValue { $0.suspendedQueues.contains(id) }
    }

    /// The queue with `id`, which was suspended, is being deinitialized: it is forgotten, before
    /// its address can be another object's.
    static func forgetSuspendedQueue(_ id: ObjectIdentifier) {
        _ = table.withLockedValue { $0.suspendedQueues.remove(id) }
    }

    /// What a queue's suspension asks for once its lock is released.
    struct Suspension {
        fileprivate let steppedAside: [Asker]
        fileprivate let turns: [ExclusivityStateMachine.Request]
        fileprivate var limitTurns: [LimitStateMachine.Turn] = []

        /// The operations that waited go back on their queue's ready list; those whose turn came
        /// are told.
        func perform() {
            for asker in steppedAside {
                asker.operation.exclusivitySteppedAside(generation: asker.generation, attempt: asker.attempt)
            }
            Exclusivity.tell(turns)
            Exclusivity.tell(limitTurns)
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
            // Started by hand: it holds its exclusive categories now, and asks for its counted
            // ones, if any, before its thread goes on.
            if asker.limits.isEmpty || continueWithLimits(asker) { waker.signal() }
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

    // MARK: Counted categories

    /// ``acquire(_:categories:limits:sequence:generation:attempt:queue:ancestors:waker:)`` for an
    /// operation with counted categories: its exclusive categories first (as any operation asks
    /// for them), then, holding those, its counted ones.
    private static func acquireWithLimits(_ operation: Op, categories: [String], limits: [OpLimit], sequence: UInt64,
                                          queue: OpQueue?, ancestors: [GroupOp],
                                          makeAsker: () -> Asker) -> (outcome: Outcome, held: LimitStateMachine.Category?) {
        let id = ObjectIdentifier(operation)
        let answer: Table.LimitsAnswer = table.withLockedValue { table in
            guard !operation.isFinished else { return Table.LimitsAnswer(outcome: .waiting) }
            let mayWait = queue.map { !table.isSuspended($0) } ?? true
            // Asked before, it holds its exclusive categories, if any: only its counted ones remain.
            if !categories.isEmpty, !table.limits.knows(id, sequence: sequence) {
                let granted: Bool
                if let again = table.machine.requestAgain(id, sequence: sequence, mayWait: mayWait) {
                    granted = again
                    if !granted && mayWait { table.machine.setPayload(of: id, makeAsker()) }
                } else {
                    table.checkExclusive(categories)
                    granted = table.machine.request(
                        ExclusivityStateMachine.Request(
                            operation: id, categories: categories,
                            ancestors: ancestors.isEmpty ? [] : Set(ancestors.map(ObjectIdentifier.init)),
                            sequence: sequence, grantsAtTurn: queue == nil, payload: operation),
                        mayWait: mayWait)
                    if !granted && mayWait && table.machine.knows(id, sequence: sequence) {
                        table.machine.setPayload(of: id, makeAsker())
                    }
                }
                if !granted {
                    return Table.LimitsAnswer(outcome: mayWait ? .waiting : .steppedAside, turns: table.machine.takeTurnRequests())
                }
            }
            var answer = table.askLimits(operation, limits: limits, sequence: sequence, mayWait: mayWait,
                                         grantsAtTurn: queue == nil, asker: makeAsker)
            if answer.outcome == .granted, queue != nil, categories.isEmpty {
                answer.held = table.limits.dropGrantedRecord(of: id)
            }
            // A refused request took the turns its exclusive categories gave (the list is empty
            // then); others come from an earlier request of the operation, given up.
            if answer.turns.isEmpty { answer.turns = table.machine.takeTurnRequests() }
            #if OPERATIONS_INTERNAL_CHECKS
            table.machine.checkInvariants()
            table.limits.checkInvariants()
            #endif
            return answer
        }
        if let mismatch = answer.mismatch {
            LimitStateMachine.mismatch(mismatch.category, mismatch.inUse, mismatch.declared)
        }
        startIntervals(answer.startsIntervals)
        tell(answer.turns)
        tell(answer.limitTurns)
        return (answer.outcome, answer.held)
    }

    /// The category a declaration of `name` with `spec` is bound to (``OpLimit/bound``; see
    /// ``LimitStateMachine/declare(_:_:)``).
    static func declare(_ name: String, _ spec: OpLimit.Spec) -> LimitStateMachine.Category {
        table.withLockedValue { table in
            // Held as an exclusive category now: the new category stays retired, so that its
            // operations ask the table, which sees the name in use.
            guard !table.machine.isInUse(name) else { return LimitStateMachine.Category(name: name, spec: spec, retired: true) }
            return table.limits.declare(name, spec)
        }
    }

    /// Gives back a permit of `category` held without a record (taken without the lock, or
    /// granted with its record dropped): without the lock while nobody waits; else through the
    /// table, which hands it to the front of the line and tells it.
    static func giveBack(_ category: LimitStateMachine.Category) {
        if category.giveBackWithoutLock() { return }
        changeLimits { $0.permitCameBack(category) }
    }

    /// Runs `change` on the counted table with the lock held, then tells the operations whose
    /// turn came, after unlocking.
    private static func changeLimits(_ change: (inout LimitStateMachine) -> Void) {
        let turns: [LimitStateMachine.Turn] = table.withLockedValue { table in
            change(&table.limits)
            let turns = table.limits.takeTurns()
            #if OPERATIONS_INTERNAL_CHECKS
            table.limits.checkInvariants()
            #endif
            return turns
        }
        tell(turns)
    }

    /// An operation started by hand was granted its exclusive categories at its turn: it asks for
    /// its counted ones now. Returns whether its thread goes on now (granted, or cancelled
    /// meanwhile: it gave back what it held); else it is told at its turn.
    private static func continueWithLimits(_ asker: Asker) -> Bool {
        let operation = asker.operation
        let id = ObjectIdentifier(operation)
        let answer: Table.LimitsAnswer = table.withLockedValue { table in
            guard !operation.isCancelled && !operation.isFinished else {
                // The cancellation withdrew the request, or is about to: what it got goes back.
                var answer = Table.LimitsAnswer(outcome: .granted)
                if table.machine.knows(id, sequence: asker.sequence) {
                    answer.turns = table.machine.releaseReturningRequests(id).turns
                }
                return answer
            }
            return table.askLimits(operation, limits: asker.limits, sequence: asker.sequence, mayWait: true,
                                   grantsAtTurn: true, asker: { asker })
        }
        if let mismatch = answer.mismatch {
            LimitStateMachine.mismatch(mismatch.category, mismatch.inUse, mismatch.declared)
        }
        startIntervals(answer.startsIntervals)
        tell(answer.turns)
        tell(answer.limitTurns)
        return answer.outcome != .waiting
    }

    /// Tells the operations whose turn came for their counted categories: one started by hand
    /// holds them now (its rate limits' intervals begin) and its thread wakes; one in a queue goes
    /// to the front of its queue's ready list.
    private static func tell(_ turns: [LimitStateMachine.Turn]) {
        for turn in turns {
            if turn.granted {
                startIntervals(turn.request.limits.filter { $0.spec.interval != nil })
            }
            guard let asker = turn.request.payload.map({ unsafeDowncast($0, to: Asker.self) }) else { continue }
            if let waker = asker.waker {
                waker.signal()
            } else {
                asker.operation.exclusivityTurnCame(generation: asker.generation, attempt: asker.attempt)
            }
        }
    }

    /// The rate limits `limits` were granted to an operation starting now: each permit comes back
    /// one interval later, measured by the limit's clock from now. A task on the library's
    /// executor sleeps on that clock meanwhile: no thread is held.
    private static func startIntervals(_ limits: [OpLimit]) {
        for limit in limits {
            guard let interval = limit.spec.interval, let clock = limit.clock else { continue }
            startInterval(of: limit.category, interval, on: clock)
        }
    }

    private static func startInterval(of category: String, _ interval: Duration, on clock: some Clock<Duration>) {
        let deadline = clock.now.advanced(by: interval)
        Task(executorPreference: OpTaskExecutor.shared) {
            // Never cancelled: a sleep ends at its deadline (an error from a clock is taken as
            // the end of the interval, so that the permit is never lost).
            try? await clock.sleep(until: deadline, tolerance: nil)
            intervalEnded(in: category)
        }
    }

    /// A rate limit's permit came back: the front of its line takes it.
    private static func intervalEnded(in category: String) {
        changeLimits { $0.intervalEnded(category) }
    }

    /// How many permits of the counted `category` are held, reserved or out (for tests).
    static func permitsInUse(of category: String) -> Int {
        table.withLockedValue { $0.limits.permitsInUse(of: category) }
    }

    /// The operations waiting for a permit of the counted `category`, first first (for tests).
    static func waitingForPermit(in category: String) -> [Op] {
        table.withLockedValue { table in
            table.limits.waiting(in: category).compactMap { ($0 as? Asker)?.operation ?? $0 as? Op }
        }
    }

    /// Whether `operation` has a request in the counted table (it waits for a permit, was offered
    /// one, or holds permits through the table rather than without it; for tests).
    static func hasCountedRequest(_ operation: Op) -> Bool {
        table.withLockedValue { $0.limits.knows(ObjectIdentifier(operation)) }
    }

    /// Whether the counted `category` is kept (in use) now (for tests).
    static func keepsCountedCategory(_ category: String) -> Bool {
        table.withLockedValue { $0.limits.spec(of: category) != nil }
    }
}
