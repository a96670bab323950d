import Synchronization

// Starting, finishing and completing an operation: the storage performs what the state machine's
// start, finish and complete events return (see the words at the top of `OpStateMachine`).

extension Op {
    /// Runs the operation now, on the calling thread.
    ///
    /// If the operation was cancelled, it skips ``main()`` and becomes finished at once. If it is
    /// already finished, `start()` does nothing. For a synchronous operation, `start()` returns
    /// once `main()` has returned and the operation is finished; an ``AsyncOp`` is still executing
    /// when `start()` returns.
    ///
    /// - Important: It is a programmer error, and traps, to call `start()` on an operation that is
    ///   in a queue (the queue starts it), that is executing, or that is not ready (a dependency has
    ///   not finished; check ``isReady`` first).
    public final func start() {
        var action = lifecycleTransition { $0.startManually() }
        if case .passGates = action {
            action = passGatesBlocking()
        }
        switch action {
        case .run:
            if Instruments.isActive { Instruments.started(self) }
            // An `AsyncOp` that a handler of its start finished has no body left to run.
            if flags.load(ordering: .relaxed) & Flags.observed != 0, !observersWillExecute() { return }
            ThreadContext.withOperation(self) {
                Instruments.runBody(of: self) { main() }
            }
            if !isAsynchronousStorage {
                finishSynchronousBody(releasesSlot: false)
            } else if flags.load(ordering: .relaxed) & Flags.observed != 0 {
                synchronousPartReturned()
            }
        case .finishWithoutRunning(let finish):
            performFinish(finish, releasesSlot: true)
        case .ignore:
            return
        case .skip, .passGates, .takeCategories:
            preconditionFailure("Internal inconsistency: a manual start of \(self) came to \(action)")
        case .misuse(let misuse):
            trap(misuse)
        }
    }

    /// What happened when a queue tried to start the operation.
    enum QueueRunOutcome {
        /// The operation ran (or was cancelled) and is finished; its slot can be reused. With
        /// `completesInDrainer`, it had no completion block and is complete at once: the drainer
        /// makes it leave the queue, then calls ``complete(leaving:)``.
        case finished(completesInDrainer: Bool)
        /// An asynchronous operation is executing; it gives its slot back when it finishes.
        case continuesAsynchronously
        /// The ready-list entry was stale, or the start came to nothing; the slot can be reused.
        case skipped
        /// The operation waits for its exclusivity categories (or stepped aside until its
        /// suspended queue resumes); the slot can be reused.
        case waitsForCategories
    }

    /// Starts the operation on behalf of `queue`, its queue, whose drainer runs on this thread,
    /// from a ready-list entry carrying `ticket`.
    final func runFromQueue(ticket: Op.Ticket, queue: OpQueue) -> QueueRunOutcome {
        var action = lifecycleTransition { $0.startFromQueue(ticket: ticket) }
        if case .takeCategories = action {
            // The request moves out of the action (which is replaced), without a copy of its
            // four references.
            guard case .takeCategories(let request) = consume action else { preconditionFailure() }
            let waits: Bool
            (action, waits) = takeCategoriesToStart(request)
            if waits { return .waitsForCategories }
        }
        switch action {
        case .run:
            queue.noteStarted(self)
            if Instruments.isActive { Instruments.started(self) }
            // An `AsyncOp` that a handler of its start finished has no body left to run (it gave
            // its slot back as it finished).
            if flags.load(ordering: .relaxed) & Flags.observed != 0, !observersWillExecute() { return .continuesAsynchronously }
            ThreadContext.withOperation(self) {
                Instruments.runBody(of: self) { main() }
            }
            if isAsynchronousStorage {
                if flags.load(ordering: .relaxed) & Flags.observed != 0 { synchronousPartReturned() }
                return .continuesAsynchronously
            }
            return .finished(completesInDrainer: finishSynchronousBody(releasesSlot: false, inDrainer: true))
        case .finishWithoutRunning(let finish):
            queue.noteStarted(self)
            return .finished(completesInDrainer: performFinish(finish, releasesSlot: false, inDrainer: true))
        case .skip:
            return .skipped
        case .ignore, .misuse, .passGates, .takeCategories:
            preconditionFailure("Internal inconsistency: a queue start of \(self) came to \(action)")
        }
    }

    /// Finishes a synchronous operation whose body returned: its observers hear `willFinish`
    /// first, then it finishes (see ``performFinish(_:releasesSlot:inDrainer:)``).
    @inline(__always)
    @discardableResult
    final func finishSynchronousBody(releasesSlot: Bool, inDrainer: Bool = false) -> Bool {
        if flags.load(ordering: .relaxed) & Flags.observed != 0 { observersWillFinish() }
        // The permit an exclusive operation holds without the table is taken in the same transition.
        let (finish, heldPermit) = lifecycleTransition { machine in
            let finish = machine.finish()
            return (finish, finish.releasesExclusivity ? machine.takeHeldPermit() : nil)
        }
        return performFinish(finish, releasesSlot: releasesSlot, inDrainer: inDrainer, heldPermit: heldPermit)
    }

    /// Performs what finishing asks for, outside every lock: dependents learn that this operation
    /// finished, the queue gets its slot back (unless the draining worker does that itself), the
    /// completion block runs, and then the operation completes.
    ///
    /// With `inDrainer`, an operation in a queue that is complete at once (no completion block) is
    /// left to the drainer, which makes it leave the queue with its next lock acquisition and then
    /// completes it; the result says so.
    ///
    /// With `inOwnTask` (an ``AsyncOp`` finishing in the task of its `async` body), a drainer that
    /// giving back the slot requests runs here once the operation is complete, starting the
    /// queue's next operations that start briefly (``OpQueue/drainStartsHere()``).
    ///
    /// - Returns: Whether the drainer must make the operation leave its queue and complete it.
    @discardableResult
    ///
    /// `heldPermit` is the permit the operation held without the table, if the transition that
    /// finished it took it already; else it is taken here (see ``OpStateMachine/takeHeldPermit()``).
    final func performFinish(_ finish: OpStateMachine.FinishAction, releasesSlot: Bool,
                             inDrainer: Bool = false, inOwnTask: Bool = false,
                             heldPermit: LimitStateMachine.Category? = nil) -> Bool {
        if flags.load(ordering: .relaxed) & Flags.instrumented != 0 || Instruments.isActive {
            // First: the finish precedes the starts of the dependents it releases. Also when no
            // instrument saw it start: one may have been installed since.
            Instruments.finished(self, hasExecuted: finish.hasExecuted, queue: finish.queue)
        }
        // Counted from serial numbers, which the action carries: a dependent that was being
        // deinitialized as this operation finished is known only by its serial number.
        var resolvedBackwardEdges = 0
        if finish.hasDependents, finish.firstDependentSerial < serial { resolvedBackwardEdges += 1 }
        for dependent in finish.otherDependents where dependent.serial < serial { resolvedBackwardEdges += 1 }
        for dependentSerial in finish.releasedDependentSerials where dependentSerial < serial { resolvedBackwardEdges += 1 }
        DependencyCycles.backwardEdgesResolved(resolvedBackwardEdges)
        // A permit held without the table goes back without it while nobody waits: no turn to tell.
        if finish.releasesExclusivity, case let held = heldPermit ?? withState({ $0.takeHeldPermit() }),
           !(held?.giveBackWithoutLock() ?? false) {
            // As for its dependents: an operation of this queue whose turn came goes on the ready
            // list without asking for another drainer when this thread's drainer polls right after
            // (and while its observers run here, this operation keeps its slot).
            ThreadContext.withNotifying(self, pollingQueue: releasesSlot ? nil : finish.queue) {
                if let held {
                    Exclusivity.giveBack(held)
                } else {
                    Exclusivity.release(self)
                }
            }
        }
        if finish.isGroupChild, let (group, error) = withState({ machine in machine.group.map { ($0, machine.error) } }),
           let error {
            // Before the dependents are told: a dependent must not run before the group cancels
            // it (`cancelsChildrenOnFailure`), and errors are listed in the order they happened.
            group.childFailed(self, error: error)
        }
        if finish.notifiesObservers, let (observers, error) = withState({ machine in machine.observers.map { ($0, machine.error) } }) {
            if !finish.hasExecuted {
                // Cancelled before it started: `willFinish` could not come earlier.
                observers.post(.willFinish(error: error), from: self, waits: false)
            }
            observers.post(.didFinish(error: error), from: self)
        }
        if finish.hasDependents {
            notifyDependents(finish, releasesSlot: releasesSlot)
        }
        var drainsHere: OpQueue?
        if releasesSlot, let queue = finish.queue, queue.releaseSlot(of: self, mayDrainHere: inOwnTask) {
            drainsHere = queue
        }
        defer { drainsHere?.drainStartsHere() }   // once this operation is complete
        if finish.hasCompletionBlock {
            // Delivered as the changes of a finish: this thread completes the operation only
            // afterwards, so a handler it runs here (the `didFinish` queued above, if earlier
            // changes kept it back until now) holds the operation up, and a wait for it from
            // there returns at once instead of waiting for this very thread.
            let (block, qualityOfService) = lifecycleTransition { machine in
                let block = machine.takeCompletionBlock()
                machine.record(.completionBlock, old: block as Any, new: Optional<@Sendable () -> Void>.none as Any)
                return (block, machine.qualityOfService)
            }
            if let block {
                let queue = finish.queue
                WorkerPool.shared.submit(qualityOfService: qualityOfService) { [self] in
                    ThreadContext.withCompletingOperation(self) {
                        block()
                    }
                    complete(leaving: queue)
                }
                return false
            }
        }
        if inDrainer, finish.queue != nil {
            return true
        }
        complete(leaving: finish.queue)
        return false
    }

    /// Tells the dependents that this operation finished; those that become ready together are
    /// pushed on their queues together, so that a queue starts the highest priority among them first.
    private final func notifyDependents(_ finish: OpStateMachine.FinishAction, releasesSlot: Bool) {
        // A drainer that will ask its queue for the next operation right after this need not
        // have another drainer requested for the dependents that become ready here.
        // Every dependent is told and scheduled before any observer hears of it (see
        // `transitionDeferringDelivery`). A drainer that will ask its queue for the next
        // operation right after this need not have another drainer requested for the dependents
        // that become ready here, unless observers are about to run on this thread first. While
        // they run, the thread context names this operation: it still holds its slot, and leaves
        // its queue only afterwards.
        let pollingQueue = releasesSlot ? nil : finish.queue
        if finish.otherDependents.isEmpty {
            // Passed on borrowed: the action holds it.
            notify(finish.firstDependent!, pollingQueue: pollingQueue)
            return
        }
        var ready: [(operation: Op, queue: OpQueue, schedule: OpStateMachine.Schedule)] = []
        ready.reserveCapacity(1 + finish.otherDependents.count)   // one allocation, not one per doubling
        var gated: [Op] = []
        var observed: [(Op, ObserverRegistry)] = []
        func tell(_ dependent: Op) {
            let (readiness, registry) = dependent.transitionDeferringDelivery { $0.dependencyFinished(self) }
            switch readiness {
            case .none: break
            case .schedule(let queue, let schedule): ready.append((dependent, queue, schedule))
            case .passGates: gated.append(dependent)
            }
            if let registry { observed.append((dependent, registry)) }
        }
        // The first dependent and then the others, without gathering them in an array first.
        tell(finish.firstDependent!)
        for dependent in finish.otherDependents {
            tell(dependent)
        }
        // Captured by value: the lists are final here, and reading the variables that `tell`
        // captures from this closure too cost a dynamic exclusivity check each.
        ThreadContext.withNotifying(self, pollingQueue: observed.isEmpty ? pollingQueue : nil) { [ready, gated, observed] in
            OpQueue.scheduleTogether(ready)
            for dependent in gated {
                dependent.passGates()
            }
            for (dependent, registry) in observed {
                dependent.deliver(registry)
            }
        }
    }

    /// Tells `dependent`, the only dependent, that this operation finished.
    private final func notify(_ dependent: Op, pollingQueue: OpQueue?) {
        let (readiness, registry) = dependent.transitionDeferringDelivery { $0.dependencyFinished(self) }
        ThreadContext.withNotifying(self, pollingQueue: registry == nil ? pollingQueue : nil) {
            dependent.performReadiness(readiness)
            dependent.deliver(registry)
        }
    }

    /// The operation is finished for good. In a queue, it leaves `queue` first, and the queue
    /// calls this back with `nil` (so that a waiter sees the queue without the operation); then
    /// its waiters are released.
    final func complete(leaving queue: OpQueue?) {
        if let queue {
            queue.leave(self)
            return
        }
        let (waiters, left, settles) = withState { $0.complete() }
        withExtendedLifetime(left) {}   // released outside the lock: it may be the last reference
        if settles {
            settleDependencies()
        }
        for waiter in waiters {
            waiter()
        }
    }
}
