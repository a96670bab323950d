import Dispatch

// Readiness and the gates between "every dependency finished" and "running": conditions, passed
// before the ready list, then exclusivity categories, taken when the queue starts the operation
// (see `OpStateMachine.Gate`).
//
// The gate follows from the dependency list: passing it starts when the operation becomes ready
// (``scheduleIfReady()``), and a counted dependency added to a ready operation undoes everything
// it passed (``closeGateForNewDependency()``): its ready-list entry is withdrawn, its exclusivity
// request is withdrawn (or its categories given back), a verdict still being reached is ignored,
// and the conditions are evaluated again once the dependencies have finished.

extension OpStateMachine {

    // MARK: Readiness

    /// What a change of readiness asks the storage to do.
    enum ReadinessAction: Equatable {
        /// Nothing to do.
        case none
        /// The operation became ready while in a queue: push it on the queue's ready list.
        case schedule(OpQueue, Schedule)
        /// The operation became ready while in a queue, and its conditions are to be evaluated
        /// before it goes on the ready list.
        case passGates

        static func == (lhs: ReadinessAction, rhs: ReadinessAction) -> Bool {
            switch (lhs, rhs) {
            case (.none, .none), (.passGates, .passGates): true
            case (.schedule(let q1, let s1), .schedule(let q2, let s2)): q1 === q2 && s1 == s2
            case (.none, _), (.schedule, _), (.passGates, _): false
            }
        }
    }

    /// Schedules the operation if it is ready, pending, in a queue and not already scheduled; one
    /// with gates still closed starts passing them instead.
    mutating func scheduleIfReady() -> ReadinessAction {
        guard let queue, isReady, !isScheduled, lifecycle == .pending else { return .none }
        switch beginPassingGates() {
        case .open: break
        case .begun: return .passGates
        case .beingPassed: return .none
        }
        isScheduled = true
        return .schedule(queue, Schedule(priority: priority, ticket: ticket))
    }

    // MARK: Gates

    /// Where a ready operation stands with its gates.
    enum GateStep {
        /// Open (or skipped: a cancelled operation ignores them): it can go on.
        case open
        /// Closed until now: passing them begins (the gate moved to ``Gate/evaluating``).
        case begun
        /// Its conditions are being evaluated, or it waits for its exclusivity categories.
        case beingPassed
    }

    /// Begins passing the gates of a ready operation if they are closed.
    mutating func beginPassingGates() -> GateStep {
        guard gate != .open && !isCancelled else { return .open }
        guard gate == .closed else { return .beingPassed }
        if let extras, !extras.hasConditionsToEvaluate {
            // Only exclusivity: nothing to evaluate. The operation takes its place in the order
            // of exclusivity requests now, and its categories when its queue starts it.
            extras.exclusivitySequence = ExclusivityStateMachine.nextSequence()
            gate = .open
            return .open
        }
        gate = .evaluating
        return .begun
    }

    /// Adds a condition (and the exclusivity categories it asks for); refused (returns `false`)
    /// once the operation has started or its gates are being passed.
    mutating func addCondition(_ condition: OpCondition) -> Bool {
        guard lifecycle == .pending, gate == .open || gate == .closed else { return false }
        let extras = ensureExtras()
        extras.conditions.append(condition)
        if condition.isAsynchronous { extras.hasAsynchronousConditions = true }
        if !condition.onlyAsksForExclusivity { extras.hasConditionsToEvaluate = true }
        if condition.mayAskForMore {
            if condition.asksForPermits {
                extras.limits = OpLimit.merged(extras.limits, condition.limits)
                isExclusive = true
            }
            if condition.asksForExclusiveCategories {
                let categories = condition.exclusivityCategories
                if extras.exclusivityCategories.isEmpty && categories.count == 1 {
                    extras.exclusivityCategories = categories   // the common case: one category
                } else {
                    extras.exclusivityCategories = Array(Set(extras.exclusivityCategories + categories)).sorted()
                }
                isExclusive = true
            }
            if condition.contributesDependencies { extras.conditionDependencies += condition.contributedDependencies }
        }
        gate = .closed
        return true
    }

    /// The conditions to evaluate, whether one is `async`, and the generation of the gate they
    /// are evaluated for.
    var gateToPass: (conditions: [OpCondition], isAsynchronous: Bool, generation: UInt32) {
        guard let extras else { return ([], false, 0) }
        return (extras.conditions.array, extras.hasAsynchronousConditions, extras.gateGeneration)
    }

    /// Starts evaluating the conditions of an operation that is about to be added to a queue,
    /// ready, with synchronous conditions only (one that has only exclusivity passes them as it
    /// is added, with nothing to evaluate) and no contributed dependencies: its queue then
    /// puts it on the ready list with the others it adds (see ``OpQueue/enqueue(_:drainingHere:)``).
    /// Returns the conditions to evaluate and the gate's generation, or `nil` if the operation
    /// does not qualify.
    mutating func startPassingGatesEarly() -> (conditions: [OpCondition], generation: UInt32)? {
        guard lifecycle == .pending, queue == nil, gate == .closed, isReady, !isCancelled,
              let extras, extras.hasConditionsToEvaluate, !extras.hasAsynchronousConditions,
              extras.conditionDependencies.isEmpty else { return nil }
        gate = .evaluating
        return (extras.conditions.array, extras.gateGeneration)
    }

    /// Keeps the task that evaluates the conditions, to cancel it with the operation. Returns
    /// `false` if the evaluation it was started for is over (the operation was cancelled, or got
    /// a dependency): the caller cancels it at once.
    mutating func keepConditionTask(_ task: Task<Void, Never>, generation: UInt32) -> Bool {
        guard lifecycle == .pending, gate == .evaluating, !isCancelled, let extras,
              extras.gateGeneration == generation else { return false }
        extras.ensureGateState().conditionTask = task
        return true
    }

    /// The conditions were evaluated for the gate's `generation`; `failure` is the error of the
    /// first that failed, if any. A failure cancels the operation (keeping an earlier error); a
    /// pass opens the gate (an exclusive operation takes its place in the order of exclusivity
    /// requests now, and its categories when its queue starts it). Ignored if the gate closed
    /// again meanwhile, or the operation moved on (it was cancelled and finished).
    mutating func conditionsEvaluated(failure: (any Error)?, generation: UInt32) -> ReadinessAction {
        guard lifecycle == .pending, gate == .evaluating, let extras, extras.gateGeneration == generation else {
            return .none
        }
        extras.gateState?.conditionTask = nil
        if let failure {
            conditionsFailed(failure, extras: extras)
        } else if isExclusive {
            extras.exclusivitySequence = ExclusivityStateMachine.nextSequence()
        }
        gate = .open
        return scheduleIfReady()
    }

    /// A condition failed with `failure`: the operation is cancelled, with `failure` as its
    /// error unless it already has one, or the condition only skips it
    /// (``OpCondition/ignoringFailure(_:)``: cancelled with no error).
    private mutating func conditionsFailed(_ failure: any Error, extras: Extras) {
        let skips = (failure as? ConditionFailedError)?.skipsOperation ?? false
        if error == nil && !skips { extras.error = failure }
        isCancelled = true
    }

    // MARK: Exclusivity, in a queue

    /// The operation's single exclusivity category, by which it waits in a lane of its queue
    /// (see ``OpQueueStateMachine/Lane``); `nil` if it has none, or several, or counted categories
    /// too (a lane lets one operation ask at a time; a counted category lets several hold).
    var laneCategory: String? {
        guard isExclusive, let extras, extras.exclusivityCategories.count == 1,
              extras.limits.isEmpty else { return nil }
        return extras.exclusivityCategories[0]
    }

    /// Called as the queue starts the operation (``startFromQueue(ticket:)``): an exclusive
    /// operation that is not cancelled takes its categories first. Returns what it asks for if so
    /// (the gate moves to ``Gate/waitingForExclusivity``).
    ///
    /// An operation whose only gate is one limit (no interval, see ``OpLimit/bound``), not a
    /// group, that has no request in the table, first tries to take its permit without the
    /// table: an atomic compare-and-swap, which may run under the operation's lock (it calls
    /// nothing). Taken, it asks for nothing (`takenWithoutLock`), and starts.
    @inline(__always)
    mutating func takesCategoriesAtStart() -> (request: CategoryRequest?, takenWithoutLock: Bool) {
        guard isExclusive, !isCancelled, let extras else { return (nil, false) }
        return takesCategoriesAtStart(extras)
    }

    /// ``takesCategoriesAtStart()`` for an exclusive operation that is not cancelled.
    private mutating func takesCategoriesAtStart(_ extras: Extras) -> (request: CategoryRequest?, takenWithoutLock: Bool) {
        if extras.limits.count == 1, extras.exclusivityCategories.isEmpty, let bound = extras.limits[0].bound {
            // (A group, the one kind that runs when cancelled, also asks for its children's
            // exclusive categories: it asks the table.)
            if !extras.mayBeInTable && !runsWhenCancelled && bound.takeWithoutLock() {
                extras.heldPermit = bound
                return (nil, true)
            }
            extras.mayBeInTable = true
        }
        gate = .waitingForExclusivity
        extras.exclusivityAttempt &+= 1
        return (CategoryRequest(generation: extras.gateGeneration, sequence: extras.exclusivitySequence,
                                attempt: extras.exclusivityAttempt,
                                categories: extras.exclusivityCategories, limits: extras.limits,
                                queue: queue, group: group), false)
    }

    /// Whether the exclusivity request the operation made with the gate's `generation` is stale:
    /// it has not started, and got a dependency (the gate closed again) or was cancelled since.
    /// (Its turn may have come meanwhile: that does not make it stale.)
    func categoryRequestIsStale(generation: UInt32) -> Bool {
        lifecycle == .pending && (isCancelled || extras?.gateGeneration != generation)
    }

    /// The categories were granted to the operation its queue is starting. Returns the start,
    /// and whether to give them back: at once if the operation was cancelled meanwhile (a
    /// cancelled group runs without them), and with a skipped start if the gate moved on (a
    /// dependency was added).
    ///
    /// `held` is the category whose permit it holds without a record in the table: kept, to be
    /// given back as it finishes, unless it is given back now.
    mutating func categoriesTaken(generation: UInt32, held: LimitStateMachine.Category? = nil) -> (start: StartAction, givesBack: Bool) {
        guard lifecycle == .pending, gate == .waitingForExclusivity, let extras,
              extras.gateGeneration == generation else { return (.skip, true) }
        gate = .open
        // A cancellation meanwhile scheduled it again: this start is the one.
        isScheduled = false
        let givesBack = isCancelled
        extras.mayBeInTable = false
        if !givesBack { extras.heldPermit = held }
        return (begin(), givesBack)
    }

    /// The operation's turn came: its categories are kept for it, and it goes to the front of its
    /// queue's ready list, to take them when the queue starts it. Ignored if it no longer waits
    /// for them, or if the turn is that of an earlier request (`attempt`): the news of a request
    /// withdrawn meanwhile (its queue was suspended) may arrive while the operation asks again,
    /// and scheduling it then would start it twice.
    mutating func exclusivityTurnCame(generation: UInt32, attempt: UInt32) -> ReadinessAction {
        guard lifecycle == .pending, gate == .waitingForExclusivity, let extras,
              extras.gateGeneration == generation, extras.exclusivityAttempt == attempt else { return .none }
        gate = .open
        guard let queue, isReady, !isScheduled else { return .none }
        isScheduled = true
        return .schedule(queue, Schedule(priority: .veryHigh, ticket: ticket))
    }

    /// The operation's queue is suspended (or was found suspended as it asked): it does not wait
    /// for its categories, and goes back on its queue's ready list (at its priority), to ask
    /// again, with its place in the order of requests, when the queue starts it after resuming.
    ///
    /// Ignored, like ``exclusivityTurnCame(generation:attempt:)``, for an earlier request.
    mutating func exclusivitySteppedAside(generation: UInt32, attempt: UInt32) -> ReadinessAction {
        guard lifecycle == .pending, gate == .waitingForExclusivity || gate == .open, let extras,
              extras.gateGeneration == generation, extras.exclusivityAttempt == attempt else { return .none }
        gate = .open
        return scheduleIfReady()
    }

    // MARK: Started by hand

    /// Marks the operation as being started by hand while it passes its gates (see
    /// ``GateState/startingManually``).
    mutating func beginManualStart() {
        ensureExtras().ensureGateState().startingManually = true
    }

    /// Registers the semaphore a `start()` called by hand waits on; returns `false` (the caller
    /// does not wait) if the operation is cancelled already.
    mutating func registerGateWaker(_ waker: DispatchSemaphore) -> Bool {
        guard !isCancelled else { return false }
        ensureExtras().ensureGateState().waker = waker
        return true
    }

    /// The conditions of an operation started by hand were evaluated (`failure` is `nil` if the
    /// wait ended with a cancellation before a verdict). Returns whether it takes exclusivity
    /// categories (waiting for them) before it starts.
    mutating func manualConditionsEvaluated(failure: (any Error)?) -> Bool {
        guard lifecycle == .pending else { return false }
        let extras = ensureExtras()
        extras.gateState?.conditionTask = nil
        if let failure {
            conditionsFailed(failure, extras: extras)
        }
        guard isExclusive && !isCancelled else { return false }
        extras.exclusivitySequence = ExclusivityStateMachine.nextSequence()
        gate = .waitingForExclusivity
        return true
    }

    /// The place of the operation's exclusivity request in the order of requests.
    var exclusivitySequence: UInt64 {
        extras?.exclusivitySequence ?? 0
    }

    /// The gates of an operation started by hand are passed (or a cancellation ended the wait):
    /// it begins, or finishes without running (giving back whatever it got) if cancelled.
    mutating func manualGatesPassed() -> StartAction {
        guard lifecycle == .pending else { return .ignore }
        gate = .open
        if let extras {
            extras.gateState?.startingManually = false
            extras.gateState?.waker = nil
        }
        return begin()
    }

    // MARK: Closing the gate again

    /// A counted dependency was just added: if that made a ready operation not ready, everything
    /// it passed on its way to running is undone, and what the storage must do after unlocking
    /// (withdraw the exclusivity request, cancel a task) is left in ``GateState/closing``.
    mutating func closeGateForNewDependency() {
        guard unfinishedDependencyCount == 1, !isCancelled, lifecycle == .pending else { return }
        if isScheduled {
            // The queue's entry is stale from now on: its ticket is not the operation's.
            isScheduled = false
            ticket &+= 1
        }
        guard let extras, !extras.conditions.isEmpty else { return }
        let wasPassing = gate != .closed
        if wasPassing {
            gate = .closed
            extras.ensureGateState().generation &+= 1
        }
        guard let gateState = extras.gateState else { return }
        var closing = gateState.closing ?? GateClosing()
        if let task = gateState.conditionTask {
            closing.cancelsTask = task
            gateState.conditionTask = nil
        }
        if wasPassing && isExclusive {
            closing.withdrawsRequest = extras.exclusivitySequence
        }
        if closing.cancelsTask != nil || closing.withdrawsRequest != nil {
            gateState.closing = closing
        }
    }

    /// Hands over what closing the gate left to do (see ``closeGateForNewDependency()``).
    mutating func takeGateClosing() -> GateClosing? {
        guard let gateState = extras?.gateState, let closing = gateState.closing else { return nil }
        gateState.closing = nil
        return closing
    }

    /// Whether a new unfinished dependency holds the operation back: not once it started, nor
    /// while a `start()` called by hand passes its gates (it counts as started).
    var countsNewDependencies: Bool {
        lifecycle == .pending && !(extras?.gateState?.startingManually ?? false)
    }

    // MARK: Cancelling

    /// The work to stop when the operation is cancelled: the task evaluating its conditions, its
    /// exclusivity request if it has not started (it may wait, or have been offered its turn, or
    /// even have been granted its categories by a start that has not begun it yet: that start
    /// finishes it without running), and the wait of a `start()` called by hand.
    mutating func gateWorkToCancel() -> GateWork? {
        guard let extras else { return nil }
        let withdraws = isExclusive && lifecycle == .pending && gate != .closed && gate != .evaluating
        let gateState = extras.gateState
        guard gateState?.conditionTask != nil || gateState?.waker != nil || withdraws else { return nil }
        let task = gateState?.conditionTask
        gateState?.conditionTask = nil
        return GateWork(task: task, waker: gateState?.waker,
                        withdrawsRequest: withdraws ? extras.exclusivitySequence : nil,
                        unparksIn: withdraws && isScheduled ? queue : nil)
    }

    /// Hands over the dependencies contributed by conditions, to be added to the queue.
    mutating func takeConditionDependencies() -> [Op] {
        defer { extras?.conditionDependencies = [] }
        return extras?.conditionDependencies ?? []
    }

    #if OPERATIONS_INTERNAL_CHECKS
    /// The gate follows from the dependencies: a scheduled operation is ready, and past its
    /// conditions unless it was cancelled.
    func checkGateInvariants() {
        if isScheduled {
            precondition(isReady, "Internal inconsistency: scheduled while a dependency holds it back")
            precondition(gate == .open || isCancelled, "Internal inconsistency: scheduled with the gate \(gate)")
        }
    }
    #endif
}

extension OpStateMachine.Extras {
    /// The gate's generation (see ``OpStateMachine/GateState/generation``).
    var gateGeneration: UInt32 { gateState?.generation ?? 0 }

    /// The gate's state, allocated if needed.
    func ensureGateState() -> OpStateMachine.GateState {
        if let gateState { return gateState }
        let created = OpStateMachine.GateState()
        gateState = created
        return created
    }
}
