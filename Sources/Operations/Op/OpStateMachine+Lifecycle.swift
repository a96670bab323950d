// The one-shot life of an operation: joining a queue, its priority there, starting, finishing
// and completing (the words at the top of `OpStateMachine`).

extension OpStateMachine {
    // MARK: Queue membership

    /// What adding the operation to a queue asks the storage to do.
    enum EnqueueAction: Equatable {
        /// Put it on the ready list now.
        case schedule(Schedule)
        /// Keep it waiting; it is scheduled when it becomes ready.
        case wait
        /// It is ready; pass its conditions and exclusivity first (see ``Gate``).
        case passGates
        /// Trap: the operation cannot be added.
        case misuse(Misuse)
    }

    /// Adds the operation to `queue`: a free operation to any queue, a group's child only to its
    /// group's queue of children (see ``Membership``).
    /// Why adding the operation to `queue` would be a programmer error, if it would (the checks
    /// of ``enqueue(in:)``, without joining).
    func refusal(joining queue: OpQueue) -> Misuse? {
        switch membership {
        case .free: break
        case .queue: return .enqueueWhileEnqueued
        case .childInQueue(let link): return link.queue === queue ? .enqueueWhileEnqueued : .enqueueGroupChild
        case .child(let link): if link.queue !== queue { return .enqueueGroupChild }
        }
        switch lifecycle {
        case .pending: return nil
        case .executing: return .enqueueWhileExecuting
        case .finishing, .finished: return .enqueueWhenFinished
        }
    }

    mutating func enqueue(in queue: OpQueue) -> EnqueueAction {
        let joined: Membership
        switch membership {
        case .free:
            joined = .queue(queue)
        case .queue:
            return .misuse(.enqueueWhileEnqueued)
        case .childInQueue(let link):
            return .misuse(link.queue === queue ? .enqueueWhileEnqueued : .enqueueGroupChild)
        case .child(let link):
            guard link.queue === queue else { return .misuse(.enqueueGroupChild) }
            joined = .childInQueue(link)
        }
        switch lifecycle {
        case .pending:
            membership = joined
            if isReady {
                switch beginPassingGates() {
                case .open: break
                case .begun: return .passGates
                case .beingPassed: return .wait   // whoever passes them schedules it
                }
                isScheduled = true
                return .schedule(Schedule(priority: priority, ticket: ticket))
            }
            return .wait
        case .executing:
            return .misuse(.enqueueWhileExecuting)
        case .finishing, .finished:
            return .misuse(.enqueueWhenFinished)
        }
    }

    // MARK: Priority

    /// Changes the priority; an operation already on a ready list is moved to the new one: it
    /// gets the next ticket (wrapping; see ``Op/Ticket``), which makes its older entries stale.
    mutating func setPriority(_ newPriority: Op.QueuePriority) -> ReadinessAction {
        guard newPriority != priority else { return .none }
        priority = newPriority
        guard isScheduled, let queue else { return .none }
        ticket = Op.nextTicket(after: ticket)
        return .schedule(queue, Schedule(priority: priority, ticket: ticket))
    }

    // MARK: Starting

    /// What a start asks the storage to do.
    enum StartAction: Equatable {
        /// Run the body; the operation is now executing.
        case run
        /// The operation was cancelled before it started: it is finished without running.
        case finishWithoutRunning(FinishAction)
        /// `start()` on a finished operation does nothing.
        case ignore
        /// A manual start of an operation with conditions or exclusivity: pass them on the calling
        /// thread, then start again.
        case passGates
        /// The queue starts an exclusive operation: it takes its categories first (see
        /// ``takesCategoriesAtStart()``).
        case takeCategories(CategoryRequest)
        /// The queue's ready-list entry is out of date (the priority changed, or the operation
        /// is not ready any more): give back the slot; the operation is rescheduled when due.
        case skip
        /// Trap.
        case misuse(Misuse)
    }

    /// A manual call of `start()`.
    mutating func startManually() -> StartAction {
        switch lifecycle {
        case .finishing, .finished:
            return .ignore
        case .executing:
            return .misuse(.startWhileExecuting)
        case .pending:
            if queue != nil { return .misuse(.startWhileEnqueued) }
            if !isReady { return .misuse(.startWhileNotReady) }
            switch beginPassingGates() {
            case .open:
                guard isExclusive && !isCancelled else { return begin() }
                // Only exclusivity: the categories are taken on the calling thread.
                gate = .evaluating
                beginManualStart()
                return .passGates
            case .begun:
                beginManualStart()
                return .passGates
            case .beingPassed: return .misuse(.startWhileExecuting)   // started twice at once
            }
        }
    }

    /// A start by the operation's queue, from a ready-list entry carrying `ticket`. Tickets are
    /// compared for equality: the queue hands out only the entry it holds for live, and no stale
    /// entry of the operation can carry the current ticket (see ``Op/Ticket``).
    mutating func startFromQueue(ticket entryTicket: Op.Ticket) -> StartAction {
        guard lifecycle == .pending, isScheduled, entryTicket == ticket else { return .skip }
        isScheduled = false
        guard isReady else { return .skip }
        // (Its one permit taken without the table, it holds it now, and starts.)
        if let request = takesCategoriesAtStart().request { return .takeCategories(request) }
        return begin()
    }

    mutating func begin() -> StartAction {
        if isCancelled && !runsWhenCancelled {
            return .finishWithoutRunning(finish())
        }
        lifecycle = .executing
        hasExecuted = true
        return .run
    }

    // MARK: Finishing

    /// What finishing asks the storage to do, in this order: tell the dependents, give the
    /// queue its slot back, run the completion block, then leave the queue and complete.
    struct FinishAction: Equatable {
        /// The first operation waiting for this one (kept apart so that the common case of one
        /// dependent needs no array); each dependent gets `dependencyFinished(_:)`.
        var firstDependent: Op?
        /// The serial number of `firstDependent` (read without touching it: see
        /// ``Op/performFinish(_:releasesSlot:inDrainer:)``).
        var firstDependentSerial: UInt64 = 0
        /// Whether any dependent is waiting (read without touching `firstDependent`).
        var hasDependents = false
        /// The other operations waiting for this one.
        var otherDependents: [Op] = []
        /// The serial numbers of dependents that were waiting but have been released since.
        var releasedDependentSerials: [UInt64] = []
        /// The queue the operation runs in, if any.
        var queue: OpQueue?
        /// Whether a completion block is set; it is handed over by ``takeCompletionBlock()``.
        var hasCompletionBlock: Bool
        /// Whether the operation asked for exclusivity categories, to give back (or to stop
        /// waiting for) now.
        var releasesExclusivity = false
        /// Whether observers are to be told that the operation finished (the storage reads them,
        /// and the error, from the extras: rare, and kept out of this action, which every
        /// operation returns).
        var notifiesObservers = false
        /// Whether the operation's body ran (false if it was cancelled before it started).
        var hasExecuted = true
        /// Whether the operation is a group's child: a failure is reported to the group before
        /// the dependents are told.
        var isGroupChild = false

        /// Every operation waiting for this one.
        var dependents: [Op] {
            guard let firstDependent else { return [] }
            return [firstDependent] + otherDependents
        }

        static func == (lhs: FinishAction, rhs: FinishAction) -> Bool {
            lhs.dependents.count == rhs.dependents.count
                && zip(lhs.dependents, rhs.dependents).allSatisfy { $0 === $1 }
                && lhs.queue === rhs.queue && lhs.hasCompletionBlock == rhs.hasCompletionBlock
        }
    }

    /// Ends execution (synchronous ops when `main()` returns; asynchronous ones on `finish()`).
    mutating func finish() -> FinishAction {
        lifecycle = .finishing
        // Collected in locals and put together at the end: building the action in place from the
        // closure made the compiler copy it.
        var firstDependent: Op?
        var firstDependentSerial: UInt64 = 0
        var hasDependents = false
        var otherDependents: [Op] = []
        var releasedDependentSerials: [UInt64] = []
        links?.dependents.removeAll { operation, serial in
            if let operation {
                if !hasDependents {
                    firstDependent = operation
                    firstDependentSerial = serial
                    hasDependents = true
                } else {
                    otherDependents.append(operation)
                }
            } else {
                releasedDependentSerials.append(serial)
            }
        }
        return FinishAction(firstDependent: firstDependent, firstDependentSerial: firstDependentSerial,
                            hasDependents: hasDependents, otherDependents: otherDependents,
                            releasedDependentSerials: releasedDependentSerials, queue: queue,
                            hasCompletionBlock: completionBlock != nil, releasesExclusivity: isExclusive,
                            notifiesObservers: hasObservers, hasExecuted: hasExecuted, isGroupChild: isGroupChild)
    }

    /// Hands over the category whose permit the operation holds without a record, clearing it
    /// (asked by an exclusive operation that finishes: it gives the permit back without the table).
    mutating func takeHeldPermit() -> LimitStateMachine.Category? {
        guard let extras, let held = extras.heldPermit else { return nil }
        extras.heldPermit = nil
        return held
    }

    /// `finish()` called by an asynchronous operation's own code: finishes it if it is executing.
    mutating func requestFinish() -> Result<FinishAction, MisuseError> {
        switch lifecycle {
        case .executing:
            return .success(finish())
        case .pending:
            return .failure(MisuseError(misuse: .finishWhenNotExecuting))
        case .finishing, .finished:
            return .failure(MisuseError(misuse: hasExecuted ? .finishTwice : .finishWithoutExecuting))
        }
    }

    /// Wraps a misuse so that it can travel in a `Result`.
    struct MisuseError: Error, Equatable {
        var misuse: Misuse
    }

    /// Hands over the completion block, clearing it (it runs once).
    mutating func takeCompletionBlock() -> (@Sendable () -> Void)? {
        defer { extras?.completionBlock = nil }
        return extras?.completionBlock
    }

    /// The completion block has returned (or there was none) and the operation has left its
    /// queue: it is finished for good. Returns the waiters to release, the queue (which the
    /// storage releases after unlocking), and whether some dependencies may have to be held
    /// weakly from now on (see ``Op/settleDependencies()``).
    mutating func complete() -> (waiters: [@Sendable () -> Void], queue: OpQueue?, settles: Bool) {
        precondition(lifecycle == .finishing, "Internal inconsistency: complete() in \(lifecycle)")
        lifecycle = .finished
        let result = (waiters, queue, hasNewerDependency || weakensEveryDependency)
        extras?.waiters = []
        switch membership {
        case .queue: membership = .free
        case .childInQueue(let link): membership = .child(link)   // still its group's child
        case .free, .child: break
        }
        return result
    }
}
