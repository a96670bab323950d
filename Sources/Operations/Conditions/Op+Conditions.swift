import Dispatch

// Conditions and exclusivity: adding them, and passing them between readiness and the ready list
// (the machine's gate; see `OpStateMachine.Gate`).

extension Op {
    /// Adds a condition the operation must pass, after its dependencies finished, before it runs.
    ///
    /// See ``OpCondition`` for when conditions are evaluated and what a failure does. A
    /// ``OpCondition/dependency(_:)`` condition makes its operation a dependency now.
    ///
    /// - Important: Conditions are added before the operation is added to a queue (or started):
    ///   adding one later is a programmer error and traps, and so is a
    ///   ``OpCondition/mutuallyExclusive(_:)`` inside ``OpCondition/any(_:)`` or ``OpCondition/not(_:)``.
    public final func addCondition(_ condition: OpCondition) {
        if let misplaced = condition.misplacedExclusivity {
            misuse("addCondition(_:) on \(self) was given \(condition.name), where \(misplaced.name) cannot be honoured: an exclusivity category or a limit's permit is held while the operation runs, whatever other conditions say. Add .mutuallyExclusive, .limited or .rateLimited on its own, or inside .all.")
        }
        // A transition, not a plain access: the flags then say that the operation has gates, so
        // that its queue evaluates them as it adds it (see `OpQueue.enqueue`).
        let accepted = transition { machine in
            machine.queue == nil && machine.addCondition(condition)
        }
        if !accepted {
            misuse("addCondition(_:) was called on \(self) after it was added to a queue or started. Add every condition before adding the operation to a queue.")
        }
        if !condition.onlyAsksForExclusivity || condition.contributesDependencies {
            markConditionsNeedALook()
        }
        if condition.contributesDependencies {
            for dependency in condition.contributedDependencies {
                addDependency(dependency)
            }
        }
    }

    /// The conditions, in the order they were added.
    public final var conditions: [OpCondition] {
        withState { $0.conditions }
    }

    // MARK: Passing the gates

    /// Evaluates the conditions of an operation that became ready in its queue; it goes on the
    /// ready list once they passed (or, cancelled by a failed condition, to finish without
    /// running). An exclusive operation takes its categories later, when its queue starts it.
    final func passGates() {
        let (conditions, isAsynchronous, generation) = withState { $0.gateToPass }
        if isAsynchronous {
            let task = startConditionTask(conditions) { [self] failure in
                conditionsEvaluated(failure, generation: generation)
            }
            // Kept to be cancelled with the operation; cancelled now if that happened already.
            if !withState({ $0.keepConditionTask(task, generation: generation) }) {
                task.cancel()
            }
        } else {
            conditionsEvaluated(OpCondition.evaluateSynchronously(conditions, for: self), generation: generation)
        }
    }

    /// Evaluates the conditions of an operation that is ready and about to be added to a queue,
    /// so that the queue schedules it with the others it adds, in one go, rather than one by one
    /// once they passed. The queue began the early pass with
    /// ``OpStateMachine/startPassingGatesEarly()``, which handed over `conditions` and the gate's
    /// `generation`, and calls this after adding what the conditions of its operations contributed.
    final func conditionsPassedEarly(_ conditions: [OpCondition], generation: UInt32) {
        conditionsEvaluated(OpCondition.evaluateSynchronously(conditions, for: self), generation: generation)
    }

    /// Starts the task that evaluates `conditions` (some are `async`) with the operation's
    /// quality of service, and hands their verdict to `done`. The one place where the library
    /// starts a task for conditions; the operation keeps it, and cancelling the operation
    /// cancels it.
    private final func startConditionTask(_ conditions: [OpCondition],
                                          done: @escaping @Sendable ((any Error)?) -> Void) -> Task<Void, Never> {
        let priority = TaskPriority(qualityOfService, queuePriority: queuePriority)
        return Task(executorPreference: OpTaskExecutor.shared, priority: priority) { [self] in
            done(await OpCondition.evaluate(conditions, for: self))
        }
    }

    /// Performs what the verdict of the conditions, evaluated for the gate's `generation`, asks for.
    private final func conditionsEvaluated(_ failure: (any Error)?, generation: UInt32) {
        let ((readiness, observers), registry) = transitionDeferringDelivery {
            $0.recordConditions(failure: failure) { $0.conditionsEvaluated(failure: failure, generation: generation) }
        }
        performReadiness(readiness)
        deliver(registry)
        observers?.deliverQueued(from: self)
    }

    // MARK: Exclusivity

    /// The queue starts the operation, which takes its exclusivity categories first (see
    /// ``Exclusivity``). Returns the start to perform: `.skip` (its slot goes back) if they are
    /// not granted now: the operation waits for its turn, holding nothing, or stepped aside
    /// because its queue is suspended.
    ///
    /// `waits` says whether a skipped start leaves the operation asking (it waits for its turn,
    /// or stepped aside until its suspended queue resumes), rather than coming to nothing.
    final func takeCategoriesToStart(_ request: OpStateMachine.CategoryRequest) -> (start: OpStateMachine.StartAction, waits: Bool) {
        let generation = request.generation
        let categories = categoriesToRequest(request.categories)
        let (outcome, held) = Exclusivity.acquireReturningHeld(
            self, categories: categories, limits: request.limits, sequence: request.sequence,
            generation: generation, attempt: request.attempt, queue: request.queue,
            ancestors: request.group.map { [$0] + $0.ancestors } ?? [])
        switch outcome {
        case .granted:
            let (start, givesBack) = lifecycleTransition { $0.categoriesTaken(generation: generation, held: held) }
            if givesBack {
                if let held {
                    Exclusivity.giveBack(held)
                } else {
                    Exclusivity.release(self, sequence: request.sequence)
                }
            }
            return (start, false)
        case .waiting:
            // A dependency added, or a cancellation, since the queue started it withdrew its
            // request, perhaps before it was made: withdrawn again now, so that none is left.
            if withState({ $0.categoryRequestIsStale(generation: generation) }) {
                Exclusivity.release(self, sequence: request.sequence)
                return (.skip, false)
            }
            return (.skip, true)
        case .steppedAside:
            exclusivitySteppedAside(generation: generation, attempt: request.attempt)
            return (.skip, true)
        }
    }

    /// The operation's turn came: it goes to the front of its queue's ready list, to take its
    /// categories when the queue starts it.
    final func exclusivityTurnCame(generation: UInt32, attempt: UInt32) {
        let (readiness, registry) = transitionDeferringDelivery { $0.exclusivityTurnCame(generation: generation, attempt: attempt) }
        performReadiness(readiness)
        deliver(registry)
    }

    /// The operation's queue is suspended: it goes back on the ready list, to ask for its
    /// categories again once the queue resumed.
    final func exclusivitySteppedAside(generation: UInt32, attempt: UInt32) {
        let (readiness, registry) = transitionDeferringDelivery { $0.exclusivitySteppedAside(generation: generation, attempt: attempt) }
        performReadiness(readiness)
        deliver(registry)
    }

    /// Performs what closing the gate again (a dependency added to a ready operation) left to do:
    /// its exclusivity request is withdrawn (or its categories given back), and the task
    /// evaluating its conditions is cancelled (its verdict would be ignored).
    final func performGateClosing(_ closing: OpStateMachine.GateClosing) {
        closing.cancelsTask?.cancel()
        if let sequence = closing.withdrawsRequest {
            Exclusivity.release(self, sequence: sequence)
            // It no longer asks: the operations of its queue parked behind it go on.
            withState { $0.queue }?.releaseLane(of: self)
        }
    }

    /// The categories to ask for: the operation's own and, for a group, those of its children.
    final var exclusivityCategoriesToRequest: [String] {
        categoriesToRequest(withState { $0.exclusivityCategories })
    }

    /// `own` (sorted, without repeats) and, for a group, the categories of its children.
    private final func categoriesToRequest(_ own: [String]) -> [String] {
        guard let group = self as? GroupOp else { return own }
        return Array(Set(own + group.descendantExclusivityCategories)).sorted()
    }

    // MARK: Started by hand

    /// Passes the gates on the calling thread, for a manual ``start()``: evaluates the conditions
    /// (waiting while `async` ones run in a task) and waits for the exclusivity categories.
    /// Cancelling the operation ends either wait at once (and cancels the task). Returns the start
    /// to perform: run, or finish without running (cancelled, or a condition failed).
    final func passGatesBlocking() -> OpStateMachine.StartAction {
        let (conditions, isAsynchronous, generation) = withState { $0.gateToPass }
        let waker = DispatchSemaphore(value: 0)
        let waits = withState { $0.registerGateWaker(waker) }
        var failure: (any Error)?
        if isAsynchronous {
            if waits {
                // `nil` until the verdict comes; a cancellation may wake the wait before.
                let verdict = LockedBox<(any Error)??>(nil)
                let task = startConditionTask(conditions) { failure in
                    verdict.withLockedValue { $0 = .some(failure) }
                    waker.signal()
                }
                if !withState({ $0.keepConditionTask(task, generation: generation) }) {
                    task.cancel()
                }
                waker.wait()
                failure = verdict.withLockedValue { $0 } ?? nil
            }
        } else {
            failure = OpCondition.evaluateSynchronously(conditions, for: self)
        }
        let (takesCategories, observers) = transition {
            $0.recordConditions(failure: failure) { $0.manualConditionsEvaluated(failure: failure) }
        }
        observers?.deliverQueued(from: self)
        if takesCategories {
            let (categories, limits, sequence, group) = withState { ($0.exclusivityCategories, $0.limits, $0.exclusivitySequence, $0.group) }
            let outcome = Exclusivity.acquire(self, categories: categoriesToRequest(categories), limits: limits, sequence: sequence,
                                              generation: generation, queue: nil,
                                              ancestors: group.map { [$0] + $0.ancestors } ?? [], waker: waker)
            if outcome == .waiting {
                // Granted at its turn, or cancelled: either signals.
                waker.wait()
            }
        }
        return lifecycleTransition { $0.manualGatesPassed() }
    }
}

extension OpStateMachine {
    /// The conditions were evaluated (see `body`): records the error as an observable change and,
    /// if the failure cancelled the operation, queues `didCancel` for its observers (in the
    /// transition, so that it comes before the finish the cancellation causes).
    mutating func recordConditions<Result>(failure: (any Error)?,
                                           _ body: (inout OpStateMachine) -> Result) -> (Result, ObserverRegistry?) {
        let old = error
        let wasCancelled = isCancelled
        let result = body(&self)
        if failure != nil, old == nil, let error {
            record(.error, old: old as Any, new: error as Any)
        }
        let observers = !wasCancelled && isCancelled ? self.observers?.queuing(.didCancel(error: error)) : nil
        return (result, observers)
    }
}
